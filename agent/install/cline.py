"""Cline: `cline_mcp_settings.json` of the Cline CLI (`$CLINE_DIR/data/settings`, default `~/.cline`) and of the
extension (its globalStorage folder) in each installed editor: VS Code, VS Code Insiders, VSCodium, Cursor, Windsurf.

Both read the same entry: `command`, `args`, `env`, `disabled`, `timeout` (seconds per tool call: Cline's default
of 60 is too short for a test suite, and 600 would end the wait just as a `run_tests` at its default limit answers,
so it is Codex's 900) and `autoApprove` for the read-only `search_skills`. Cline's settings are global, so the server
is pinned to the workspace and the scope is always `user`.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Any

from agent.install.files import Change, Edit, InstallError, dump_json, parse_json, read_text, save_all, undo
from agent.install.target import NAME, TOOL_TIMEOUT_S, Target, drop_mcp_server, is_skillbank, put_server

EXTENSION_ID = "saoudrizwan.claude-dev"
#: Seconds Cline waits for a tool call: longer than a `run_tests` that reaches its default limit (see TOOL_TIMEOUT_S).
TIMEOUT_S = TOOL_TIMEOUT_S
AUTO_APPROVE = ["search_skills"]


def cli_file(target: Target) -> Path:
    if target.env.get("CLINE_DATA_DIR"):
        return Path(target.env["CLINE_DATA_DIR"]) / "settings" / "cline_mcp_settings.json"
    base = Path(target.env["CLINE_DIR"]) if target.env.get("CLINE_DIR") else target.home / ".cline"
    return base / "data" / "settings" / "cline_mcp_settings.json"


#: The folders of VS Code and of the editors built on it where the Cline extension keeps its globalStorage.
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")


def vscode_user_dir(target: Target, editor: str = "Code") -> Path:
    if sys.platform == "darwin":
        return target.home / "Library" / "Application Support" / editor / "User"
    if sys.platform == "win32" and target.env.get("APPDATA"):
        return Path(target.env["APPDATA"]) / editor / "User"
    config = Path(target.env["XDG_CONFIG_HOME"]) if target.env.get("XDG_CONFIG_HOME") else target.home / ".config"
    return config / editor / "User"


def extension_file(target: Target, editor: str = "Code") -> Path:
    return vscode_user_dir(target, editor) / "globalStorage" / EXTENSION_ID / "settings" / "cline_mcp_settings.json"


def files(target: Target) -> list[Path]:
    """The CLI's settings file, and the extension's in each installed editor (VS Code, Insiders, VSCodium, Cursor,
    Windsurf)."""
    if target.scope == "project":
        raise InstallError("Cline's MCP settings are global; use --scope user (the default) with --workspace DIR")
    return [cli_file(target)] + [extension_file(target, e) for e in EDITORS if vscode_user_dir(target, e).is_dir()]


def server_entry(target: Target) -> dict[str, Any]:
    args = ["serve", "--workspace", str(target.workspace)]
    return {"type": "stdio", "command": target.command, "args": args, "env": target.server_env(), "disabled": False,
            "timeout": TIMEOUT_S, "autoApprove": AUTO_APPROVE}  # fmt: skip


def _servers(data: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: mcpServers is not an object; fix it, then run again")
    return servers


def _edit(target: Target, old: str | None, path: Path, force: bool) -> Edit:
    data = parse_json(old, path)
    servers = _servers(data, path)
    pre_install = not is_skillbank(servers.get(NAME))
    what = put_server(servers, server_entry(target), path, force)
    if what is None:
        return Edit(old or "", "the skillbank server is already there", pre_install)
    return Edit(dump_json(data, like=old), what, pre_install)


def _removal(target: Target, path: Path, text: str, backup: str | None) -> tuple[str, str] | None:
    return drop_mcp_server(text, path, server_entry(target), target.force)


def _installed(target: Target, path: Path, backup: str | None) -> str:
    return _edit(target, backup, path, True).text


def install(target: Target) -> list[Change]:
    planned = [(path, _edit(target, read_text(path), path, target.force)) for path in files(target)]  # check all first
    return save_all(planned)


def uninstall(target: Target) -> list[Change]:
    changes = []
    for path in files(target):
        if not path.exists():
            continue
        change = undo(
            path,
            installed=partial(_installed, target, path),
            remove=partial(_removal, target, path),
            deletable=True,
        )
        changes.append(change or Change(path=str(path), action="unchanged", what="no skillbank server"))
    return changes
