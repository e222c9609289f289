"""Codex: `[mcp_servers.skillbank]` in `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`).

The file is edited with tomlkit, so the user's comments, key order and formatting survive. `tool_timeout_sec` is
raised because `run_tests` may run the whole suite (Codex waits 60 s by default); `SKILLBANK_*` settings seen at
install time are pinned in `env`, since Codex starts servers with a minimal environment. `required = true` makes
Codex wait for the server before the first turn (otherwise its tools join only later turns), and `search_skills`
is approved up front. Codex 0.169 no longer needs that entry (`search_skills` is annotated read-only, and Codex's
automatic mode asks only before tools that are not read-only and may be destructive or open-world; a `codex exec`
run without it still calls the tool, checked); it is kept because it is harmless and holds where Codex would ask
anyway (`default_tools_approval_mode = "prompt"` on the server, older clients), since `codex exec` cannot ask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import Table

from agent.install.files import Change, InstallError, dump_toml, read_toml, save
from agent.install.target import NAME, Target, conflict, is_skillbank, same_server

TOOL_TIMEOUT_S = 900
STARTUP_TIMEOUT_S = 60
#: Tools Codex may call without asking, even where its approval settings would ask (`codex exec` cannot ask).
APPROVED = ("search_skills",)


def config_file(target: Target) -> Path:
    if target.scope == "project":
        raise InstallError("Codex reads MCP servers from its user config only; use --scope user (the default)")
    base = Path(target.env["CODEX_HOME"]) if target.env.get("CODEX_HOME") else target.home / ".codex"
    return base / "config.toml"


def server_entry(target: Target) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": target.command, "args": target.server_args()}
    if target.server_env():
        entry["env"] = target.server_env()
    entry["startup_timeout_sec"] = STARTUP_TIMEOUT_S
    entry["tool_timeout_sec"] = TOOL_TIMEOUT_S
    entry["required"] = True
    entry["tools"] = {name: {"approval_mode": "approve"} for name in APPROVED}
    return entry


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _servers(doc: tomlkit.TOMLDocument, path: Path, create: bool) -> Table | None:
    servers = doc.get("mcp_servers")
    if servers is None:
        if not create:
            return None
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    if not isinstance(servers, Table):
        raise InstallError(f"{path}: mcp_servers is not a table; fix it, then run again")
    return servers


def install(target: Target) -> list[Change]:
    path = config_file(target)
    doc = read_toml(path)
    servers = _servers(doc, path, create=True)
    assert servers is not None
    wanted = server_entry(target)
    existing = _plain(servers.get(NAME))
    if existing is not None and same_server(existing, wanted):
        return [save(path, dump_toml(doc), "the skillbank server is already there")]
    if existing is not None and not target.force:
        raise conflict(path, "install")
    table = tomlkit.table()
    for key, value in wanted.items():
        if key == "env":
            env = tomlkit.inline_table()
            env.update(value)
            table[key] = env
        elif key == "tools":
            tools = tomlkit.table(is_super_table=True)
            for name, settings in value.items():
                tools[name] = tomlkit.table()
                tools[name].update(settings)
            table[key] = tools
        else:
            table[key] = value
    if servers.get(NAME) is None and len(servers):
        table.add(tomlkit.nl())  # a blank line before whatever table follows, as the user's own tables have
    servers[NAME] = table
    what = "replaced the skillbank server" if existing is not None else "added [mcp_servers.skillbank]"
    return [save(path, dump_toml(doc), what)]


def uninstall(target: Target) -> list[Change]:
    path = config_file(target)
    if not path.exists():
        return []
    doc = read_toml(path)
    servers = _servers(doc, path, create=False)
    existing = _plain(servers.get(NAME)) if servers is not None else None
    if servers is None or existing is None:
        return [Change(path=str(path), action="unchanged", what="no skillbank server")]
    if not (same_server(existing, server_entry(target)) or is_skillbank(existing) or target.force):
        raise InstallError(f"{path} has an MCP server named {NAME!r} that skillbank did not write; rerun with --force "
                           "to remove it anyway")  # fmt: skip
    del servers[NAME]
    if not servers:
        del doc["mcp_servers"]
    change = save(path, dump_toml(doc), "removed [mcp_servers.skillbank]")
    return [change.model_copy(update={"action": "removed"})]
