"""Claude Code: the server in `.mcp.json` (project) or `~/.claude.json` (user), and with `--hooks` the capture
hooks of `claude_settings.example.json` merged into `.claude/settings.json` (project) or `~/.claude/settings.json`.

A project server from `.mcp.json` waits for the user's approval before Claude Code starts it; running the install is
that approval, so project scope also lists the server in `enabledMcpjsonServers` of `.claude/settings.local.json`
(the per-user, uncommitted settings where Claude Code records it).

A server the user once turned off in Claude Code is listed in `disabledMcpjsonServers` there, and Claude Code does
not start it whatever `enabledMcpjsonServers` says; so install takes skillbank out of that list (and says so), and
uninstall puts it back when the backup shows it was there.

The hooks let skillbank capture Claude's own Edit/Bash calls and inject skills into prompts; each is an entry
`{"matcher"?, "hooks": [{"type": "command", "command": "<skillbank> hook claude", "timeout": 10}]}` appended to the
event's list, so the user's own hooks stay as they are and uninstall removes only these entries. Claude Code runs the
command with `sh -c`, so the executable's path is shell-quoted there when it needs to be (a space in it, say).
"""

from __future__ import annotations

import contextlib
import shlex
from pathlib import Path
from typing import Any

from agent.install.files import Change, Edit, InstallError, dump_json, parse_json, read_text, save_edit, undo
from agent.install.target import NAME, Target, drop_mcp_server, is_skillbank, put_server

#: Claude Code hook events skillbank listens to; True where the event takes a tool matcher.
HOOK_EVENTS = {"SessionStart": False, "UserPromptSubmit": False, "PostToolUse": True, "PostToolUseFailure": True,
               "SessionEnd": False}  # fmt: skip
ENABLED = "enabledMcpjsonServers"
DISABLED = "disabledMcpjsonServers"


def config_dir(target: Target) -> Path:
    return Path(target.env["CLAUDE_CONFIG_DIR"]) if target.env.get("CLAUDE_CONFIG_DIR") else target.home / ".claude"


def servers_file(target: Target) -> Path:
    if target.scope == "project":
        return target.workspace / ".mcp.json"
    if target.env.get("CLAUDE_CONFIG_DIR"):
        return config_dir(target) / ".claude.json"
    return target.home / ".claude.json"


def local_settings_file(target: Target) -> Path:
    return target.workspace / ".claude" / "settings.local.json"


def settings_file(target: Target) -> Path:
    return (target.workspace / ".claude" if target.scope == "project" else config_dir(target)) / "settings.json"


def server_entry(target: Target) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio", "command": target.command, "args": target.server_args()}
    entry["env"] = target.server_env()
    return entry


def hook_command(command: str) -> str:
    """The hook's command line; Claude Code hands it to `sh -c`, so the path is quoted (it may hold a space)."""
    return f"{shlex.quote(command)} hook claude"


def hook_entries(command: str, *, quoted: bool = True) -> dict[str, dict[str, Any]]:
    """Our entry per event; `quoted=False` gives the form earlier installs wrote (uninstall removes it too)."""
    line = hook_command(command) if quoted else f"{command} hook claude"
    hook = {"type": "command", "command": line, "timeout": 10}
    return {event: ({"matcher": "*"} if matcher else {}) | {"hooks": [hook]} for event, matcher in HOOK_EVENTS.items()}


def _map(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InstallError(f"{path}: {key!r} is not an object; fix it, then run again")
    return value


def _list(data: dict[str, Any], key: str, path: Path) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise InstallError(f"{path}: {key} is not a list; fix it, then run again")
    return value


def _servers_edit(target: Target, old: str | None, path: Path, force: bool) -> Edit:
    data = parse_json(old, path)
    servers = _map(data, "mcpServers", path)
    pre_install = not is_skillbank(servers.get(NAME))
    what = put_server(servers, server_entry(target), path, force)
    if what is None:
        return Edit(old or "", "the skillbank server is already there", pre_install)
    return Edit(dump_json(data, like=old), what, pre_install)


def _approval_edit(old: str | None, path: Path) -> Edit:
    data = parse_json(old, path)
    enabled, disabled = _list(data, ENABLED, path), _list(data, DISABLED, path)
    pre_install = NAME not in enabled
    if NAME in enabled and NAME not in disabled:
        return Edit(old or "", "the project's skillbank server is already approved", pre_install)
    what = f"approved the project's skillbank server ({ENABLED})"
    if NAME in disabled:
        data[DISABLED] = [name for name in disabled if name != NAME]
        if not data[DISABLED]:
            del data[DISABLED]
        what += f" and took it out of {DISABLED}, where it had been turned off"
    if NAME not in enabled:
        data[ENABLED] = [*enabled, NAME]
    return Edit(dump_json(data, like=old), what, pre_install)


def _hooks_edit(target: Target, old: str | None, path: Path) -> Edit:
    data = parse_json(old, path)
    hooks = _map(data, "hooks", path)
    legacy = hook_entries(target.command, quoted=False)
    added, present = [], False
    for event, entry in hook_entries(target.command).items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InstallError(f"{path}: hooks.{event} is not a list; fix it, then run again")
        present = present or entry in entries or legacy[event] in entries
        if entry not in entries:
            entries.append(entry)
            added.append(event)
    if not added:
        return Edit(old or "", "the skillbank hooks are already there", pre_install=False)
    return Edit(dump_json(data, like=old), f"added skillbank hooks for {', '.join(added)}", pre_install=not present)


def install(target: Target) -> list[Change]:
    path = servers_file(target)
    planned = [(path, _servers_edit(target, read_text(path), path, target.force))]  # check every file first
    if target.scope == "project":
        local = local_settings_file(target)
        planned.append((local, _approval_edit(read_text(local), local)))
    if target.hooks:
        settings = settings_file(target)
        planned.append((settings, _hooks_edit(target, read_text(settings), settings)))
    return [save_edit(p, edit) for p, edit in planned]


def _unserve(target: Target, text: str, path: Path) -> tuple[str, str] | None:
    return drop_mcp_server(text, path, server_entry(target), target.force)


def _withdraw(text: str, backup: str | None, path: Path) -> tuple[str, str] | None:
    data = parse_json(text, path)
    enabled = data.get(ENABLED)
    if not (isinstance(enabled, list) and NAME in enabled):
        return None
    data[ENABLED] = [name for name in enabled if name != NAME]
    if not data[ENABLED]:
        del data[ENABLED]
    what = "withdrew the approval of the project's skillbank server"
    before: dict[str, Any] = {}
    with contextlib.suppress(InstallError):
        before = parse_json(backup, path)
    was, disabled = before.get(DISABLED), data.get(DISABLED, [])
    if isinstance(was, list) and NAME in was and isinstance(disabled, list) and NAME not in disabled:
        data[DISABLED] = [*disabled, NAME]  # it was turned off before install: off again
        what += f" and listed it in {DISABLED} again"
    return dump_json(data, like=text), what


def _unhook(target: Target, text: str, path: Path) -> tuple[str, str] | None:
    data = parse_json(text, path)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return None
    dropped: list[str] = []
    for entries_by_event in (hook_entries(target.command), hook_entries(target.command, quoted=False)):
        for event, entry in entries_by_event.items():
            entries = hooks.get(event)
            if isinstance(entries, list) and entry in entries:
                entries.remove(entry)
                dropped += [] if event in dropped else [event]
                if not entries:
                    del hooks[event]
    if not dropped:
        return None
    if not hooks:
        del data["hooks"]
    return dump_json(data, like=text), f"removed skillbank hooks for {', '.join(dropped)}"


def uninstall(target: Target) -> list[Change]:
    changes = []
    path = servers_file(target)
    if path.exists():
        change = undo(
            path,
            installed=lambda backup: _servers_edit(target, backup, path, True).text,
            remove=lambda text, _: _unserve(target, text, path),
            deletable=target.scope == "project",
        )
        changes.append(change or Change(path=str(path), action="unchanged", what="no skillbank server"))
    local = local_settings_file(target)
    if target.scope == "project":
        change = undo(
            local,
            installed=lambda backup: _approval_edit(backup, local).text,
            remove=lambda text, backup: _withdraw(text, backup, local),
            deletable=True,
        )
        changes += [change] if change else []
    settings = settings_file(target)
    change = undo(
        settings,
        installed=lambda backup: _hooks_edit(target, backup, settings).text,
        remove=lambda text, _: _unhook(target, text, settings),
        deletable=True,
    )
    return changes + ([change] if change else [])
