"""Codex: `[mcp_servers.skillbank]` in `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`).

The file is edited with tomlkit, so the user's comments, key order and formatting survive; the new table goes after
the other servers, before the comments that lead into the next table (`toml_layout`). `mcp_servers` may be any TOML
table: split by other tables, written with dotted keys, or inline (`mcp_servers = { a = {...} }`, where the entry is
added inline too). Whatever tomlkit makes of the file is written only if it reads (tomllib) as the old config
plus the server, and uninstall's only as the config less it (`_checked`). `tool_timeout_sec` is raised because
`run_tests` may run the whole suite (Codex waits 60 s by default) and must be able to answer at its own limit
(`TOOL_TIMEOUT_S`); `SKILLBANK_*` settings seen at install time
are pinned in `env`, since Codex starts servers with a minimal environment. `required = true` makes Codex wait for
the server before the first turn (otherwise its tools join only later turns), and `search_skills` is approved up
front. Codex 0.169 no longer needs that entry (`search_skills` is annotated read-only, and Codex's automatic mode
asks only before tools that are not read-only and may be destructive or open-world; a `codex exec` run without it
still calls the tool, checked); it is kept because it is harmless and holds where Codex would ask anyway
(`default_tools_approval_mode = "prompt"` on the server, older clients), since `codex exec` cannot ask.
"""

from __future__ import annotations

import contextlib
import tomllib
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import InlineTable, Table

from agent.install.files import Change, Edit, InstallError, parse_toml, read_text, save_all, undo
from agent.install.target import NAME, TOOL_TIMEOUT_S, Target, conflict, is_skillbank, same_server
from agent.install.toml_layout import insert_table, remove_table

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


def _servers(doc: tomlkit.TOMLDocument, path: Path) -> MutableMapping[str, Any] | None:
    """`mcp_servers` as tomlkit holds it: a table, one split by other tables (a proxy), or an inline table."""
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, MutableMapping):
        raise InstallError(f"{path}: mcp_servers is not a table; fix it, then run again")
    return servers


def _table(wanted: dict[str, Any]) -> Table:
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
    return table


def _inline(value: dict[str, Any]) -> InlineTable:
    table = tomlkit.inline_table()
    for key, item in value.items():
        table[key] = _inline(item) if isinstance(item, dict) else item
    return table


def _alone(table: Table) -> str:
    """The table's text as `[mcp_servers.skillbank]` and its sub-tables."""
    doc = tomlkit.document()
    servers = tomlkit.table(is_super_table=True)
    servers[NAME] = table
    doc["mcp_servers"] = servers
    return tomlkit.dumps(doc)


def _edit(target: Target, old: str | None, path: Path, force: bool) -> Edit:
    doc = parse_toml(old, path)
    servers = _servers(doc, path)
    wanted = server_entry(target)
    existing = _plain(servers.get(NAME)) if servers is not None else None
    if existing is not None and same_server(existing, wanted):
        return Edit(old or "", "the skillbank server is already there", pre_install=False)
    if existing is not None and not force:
        raise conflict(path, "install")
    what = "replaced the skillbank server" if existing is not None else "added [mcp_servers.skillbank]"
    pre_install = not is_skillbank(existing)
    if old and not old.endswith("\n") and not isinstance(servers, InlineTable):
        # What follows the last line is a table of its own: that line gets the file's line ending first (tomlkit
        # would end it with "\n" in a CRLF file).
        old += "\r\n" if "\r\n" in old else "\n"
        doc = parse_toml(old, path)
        servers = _servers(doc, path)
    if isinstance(servers, InlineTable):
        servers[NAME] = _inline(wanted)
        inline = what.replace("[mcp_servers.skillbank]", "skillbank to the inline mcp_servers")
        return Edit(tomlkit.dumps(doc), inline, pre_install)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    servers[NAME] = _table(wanted)
    placed = tomlkit.dumps(doc)
    expected = _with_server(old, wanted)
    if existing is not None:  # replaced where it was
        return Edit(_checked(path, expected, placed), what, pre_install)
    text = insert_table(old or "", placed, _alone(_table(wanted)))
    appended = (old or "") + ("\n" if old and not old.endswith("\n") else "") + ("\n" if old else "")
    appended += _alone(_table(wanted))
    return Edit(_checked(path, expected, text, placed, appended), what, pre_install)


def _with_server(old: str | None, wanted: dict[str, Any]) -> dict[str, Any]:
    """What the config must read as once the server is in it: the old config, `mcp_servers.skillbank` set."""
    data = tomllib.loads(old or "")
    data.setdefault("mcp_servers", {})[NAME] = wanted
    return data


def _checked(path: Path, expected: dict[str, Any], *candidates: str) -> str:
    """The first text that reads as `expected` (the file's layout kept as far as one does). tomlkit puts a table
    after the first root key of a file whose root has dotted `mcp_servers.x.y = ...` keys, which moves the keys
    after it into the new table: a text that reads differently is never written. The last resort, the table at the
    end of the file, is right wherever the file's tables allow one more."""
    for text in candidates:
        try:
            if tomllib.loads(text) == expected:
                return text
        except tomllib.TOMLDecodeError:
            continue
    raise InstallError(
        f"{path}: the skillbank server cannot be added without changing the rest of the file (its mcp_servers are "
        "written in a way tomlkit cannot extend); add [mcp_servers.skillbank] by hand (see examples/), or move "
        "the other servers into [mcp_servers.<name>] tables"
    )


def install(target: Target) -> list[Change]:
    path = config_file(target)
    return save_all([(path, _edit(target, read_text(path), path, target.force))])


def _removal(target: Target, text: str, path: Path) -> tuple[str, str] | None:
    doc = parse_toml(text, path)
    servers = _servers(doc, path)
    existing = _plain(servers.get(NAME)) if servers is not None else None
    if servers is None or existing is None:
        return None
    if not (same_server(existing, server_entry(target)) or is_skillbank(existing) or target.force):
        raise InstallError(f"{path} has an MCP server named {NAME!r} that skillbank did not write; rerun with --force "
                           "to remove it anyway")  # fmt: skip
    implicit = isinstance(servers, Table) and servers.is_super_table()  # no `[mcp_servers]` header of the user's
    del servers[NAME]
    if not servers and implicit:
        del doc["mcp_servers"]
    removed = tomlkit.dumps(doc)
    new = removed if isinstance(servers, InlineTable) else remove_table(text, removed)
    expected = tomllib.loads(text)
    del expected["mcp_servers"][NAME]
    if not expected["mcp_servers"] and implicit:
        del expected["mcp_servers"]
    for candidate in (new, removed):
        with contextlib.suppress(tomllib.TOMLDecodeError):
            if tomllib.loads(candidate) == expected:
                return candidate, "removed [mcp_servers.skillbank]"
    raise InstallError(
        f"{path}: the skillbank server cannot be taken out without changing the rest of the file; remove "
        "[mcp_servers.skillbank] by hand"
    )


def uninstall(target: Target) -> list[Change]:
    path = config_file(target)
    if not path.exists():
        return []
    change = undo(
        path,
        installed=lambda backup: _edit(target, backup, path, True).text,
        remove=lambda text, _: _removal(target, text, path),
        deletable=True,
    )
    return [change or Change(path=str(path), action="unchanged", what="no skillbank server")]
