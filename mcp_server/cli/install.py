"""`skillbank install|uninstall claude|codex|cline`: connect a client to skillbank in one step, or undo it.

A thin adapter over `agent.install`: options and the environment are resolved here (the `skillbank` executable
the client will start, HOME, config locations), and each change is printed as one line.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from mcp_server.cli.common import clean_errors, fail

ClientName = Literal["claude", "codex", "cline"]
ScopeName = Literal["project", "user"]
DEFAULT_SCOPE: dict[str, ScopeName] = {"claude": "project", "codex": "user", "cline": "user"}


def _skillbank_command() -> str:
    beside = Path(sys.executable).with_name("skillbank")
    found = str(beside) if beside.exists() else shutil.which("skillbank")
    if found is None:
        fail("cannot find the skillbank executable to register; install skillbank (make install) first")
    return str(Path(found).absolute())


def _target(client: ClientName, scope: ScopeName | None, workspace: Path | None, hooks: bool, force: bool):
    from agent.install import Target

    if hooks and client != "claude":
        fail("--hooks is for Claude Code only (Codex and Cline have no hook to capture their own edits with)")
    chosen: ScopeName = scope or DEFAULT_SCOPE[client]
    root = (workspace or Path.cwd()).absolute()
    if workspace is not None and not root.is_dir():
        fail(f"--workspace {workspace} is not a directory")
    pin = client == "cline" or (chosen == "user" and workspace is not None)
    return Target(client=client, scope=chosen, workspace=root, pin_workspace=pin, home=Path.home(),
                  command=_skillbank_command(), env=dict(os.environ), force=force, hooks=hooks)  # fmt: skip


Scope = Annotated[
    Literal["project", "user"] | None,
    typer.Option(help="project (Claude Code's .mcp.json) or user config; default: project for claude, else user."),
]
Workspace = Annotated[Path | None, typer.Option(help="The project (default: cwd); pinned for Cline and user scope.")]
Force = Annotated[bool, typer.Option(help="Replace or remove a different server named skillbank.")]


def install(
    client: Annotated[ClientName, typer.Argument(help="claude, codex or cline.")],
    scope: Scope = None,
    workspace: Workspace = None,
    hooks: Annotated[bool, typer.Option(help="Claude Code: also merge the trajectory-capture hooks.")] = False,
    force: Force = False,
) -> None:
    """Register skillbank as an MCP server of Claude Code, Codex or Cline (idempotent, with backups)."""
    from agent.install import install as run

    with clean_errors():
        for change in run(_target(client, scope, workspace, hooks, force)):
            typer.echo(change.line())


def uninstall(
    client: Annotated[ClientName, typer.Argument(help="claude, codex or cline.")],
    scope: Scope = None,
    workspace: Workspace = None,
    hooks: Annotated[bool, typer.Option(help="Accepted for symmetry; installed hooks are always removed.")] = False,
    force: Force = False,
) -> None:
    """Remove exactly what `skillbank install` added."""
    from agent.install import uninstall as run

    with clean_errors():
        changes = run(_target(client, scope, workspace, hooks and client == "claude", force))
        for change in changes:
            typer.echo(change.line())
        if not changes:
            typer.echo("nothing to remove")
