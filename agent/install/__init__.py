"""One-step installers that connect Claude Code, Codex and Cline to skillbank (`skillbank install|uninstall`).

Each keeps what is in the client's config, writes a backup before changing a file, refuses to replace a different
server of the same name unless forced, reports every change, and is idempotent. Uninstall removes exactly what
install added: a file still as install left it gets its pre-install bytes back from the backup; one edited since
loses only the `skillbank` server entry, the approval and the hook entries install merged (containers it emptied
go too), in the file's own layout. The rules for backups, symlinks and modes are in `files`.
"""

from __future__ import annotations

from agent.install import claude, cline, codex
from agent.install.files import Change, InstallError
from agent.install.target import Target

__all__ = ["Change", "InstallError", "Target", "install", "uninstall"]


def install(target: Target) -> list[Change]:
    return {"claude": claude.install, "codex": codex.install, "cline": cline.install}[target.client](target)


def uninstall(target: Target) -> list[Change]:
    return {"claude": claude.uninstall, "codex": codex.uninstall, "cline": cline.uninstall}[target.client](target)
