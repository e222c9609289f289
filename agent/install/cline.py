"""Cline: `cline_mcp_settings.json` of the Cline CLI (`$CLINE_DIR/data/settings`, default `~/.cline`) and of the
VS Code extension (its globalStorage folder, when VS Code is installed).

Both read the same entry: `command`, `args`, `env`, `disabled`, `timeout` (seconds; Cline's default of 60 is too
short for a test suite) and `autoApprove` for the read-only `search_skills`. Cline's settings are global, so the
server is pinned to the workspace and the scope is always `user`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agent.install.files import Change, InstallError, dump_json, finish, read_json, save
from agent.install.target import Target, drop_server, put_server

EXTENSION_ID = "saoudrizwan.claude-dev"
TIMEOUT_S = 600
AUTO_APPROVE = ["search_skills"]


def cli_file(target: Target) -> Path:
    if target.env.get("CLINE_DATA_DIR"):
        return Path(target.env["CLINE_DATA_DIR"]) / "settings" / "cline_mcp_settings.json"
    base = Path(target.env["CLINE_DIR"]) if target.env.get("CLINE_DIR") else target.home / ".cline"
    return base / "data" / "settings" / "cline_mcp_settings.json"


def vscode_user_dir(target: Target) -> Path:
    if sys.platform == "darwin":
        return target.home / "Library" / "Application Support" / "Code" / "User"
    if sys.platform == "win32" and target.env.get("APPDATA"):
        return Path(target.env["APPDATA"]) / "Code" / "User"
    config = Path(target.env["XDG_CONFIG_HOME"]) if target.env.get("XDG_CONFIG_HOME") else target.home / ".config"
    return config / "Code" / "User"


def extension_file(target: Target) -> Path:
    return vscode_user_dir(target) / "globalStorage" / EXTENSION_ID / "settings" / "cline_mcp_settings.json"


def files(target: Target) -> list[Path]:
    if target.scope == "project":
        raise InstallError("Cline's MCP settings are global; use --scope user (the default) with --workspace DIR")
    found = [cli_file(target)]
    if vscode_user_dir(target).is_dir():
        found.append(extension_file(target))
    return found


def server_entry(target: Target) -> dict[str, Any]:
    args = ["serve", "--workspace", str(target.workspace)]
    return {"type": "stdio", "command": target.command, "args": args, "env": target.server_env(), "disabled": False,
            "timeout": TIMEOUT_S, "autoApprove": AUTO_APPROVE}  # fmt: skip


def _servers(data: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: mcpServers is not an object; fix it, then run again")
    return servers


def install(target: Target) -> list[Change]:
    planned = []
    for path in files(target):  # check every file before writing any
        data = read_json(path)
        what = put_server(_servers(data, path), server_entry(target), path, target.force)
        planned.append((path, data, what))
    return [save(p, dump_json(d), what or "the skillbank server is already there") for p, d, what in planned]


def uninstall(target: Target) -> list[Change]:
    changes = []
    for path in files(target):
        if not path.exists():
            continue
        data = read_json(path)
        servers = data.get("mcpServers")
        removed = isinstance(servers, dict) and drop_server(servers, server_entry(target), path, target.force)
        if isinstance(servers, dict) and not servers:
            del data["mcpServers"]
        what = "removed the skillbank server" if removed else "no skillbank server"
        changes.append(finish(path, data, what, deletable=True))
    return changes
