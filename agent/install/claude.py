"""Claude Code: the server in `.mcp.json` (project) or `~/.claude.json` (user), and with `--hooks` the capture
hooks of `claude_settings.example.json` merged into `.claude/settings.json` (project) or `~/.claude/settings.json`.

A project server from `.mcp.json` waits for the user's approval before Claude Code starts it; running the install is
that approval, so project scope also lists the server in `enabledMcpjsonServers` of `.claude/settings.local.json`
(the per-user, uncommitted settings where Claude Code records it).

A server the user once turned off in Claude Code is listed in `disabledMcpjsonServers` there, and Claude Code does
not start it whatever `enabledMcpjsonServers` says; so install takes skillbank out of that list (and says so), and
uninstall puts it back when the backup shows it was there.

The hooks let skillbank capture Claude's own Edit/Bash calls and inject skills into prompts; each is an entry
`{"matcher"?, "hooks": [{"type": "command", "command": "[env SKILLBANK_...=...] <skillbank> hook claude",
"timeout": 10}]}` appended to the event's list, so the user's own hooks stay as they are and uninstall removes only
these entries. The `env` prefix pins the settings the hook reads (`Target.hook_env`), as the server's `env` pins the
server's: Claude Code runs hooks in its own environment, and a hook without them would record into another data
dir, unredacted. Claude Code runs the command with `sh -c`, so every word is shell-quoted where it needs to be.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.install.files import Change, Edit, InstallError, dump_json, parse_json, read_text, save_all, undo
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


def hook_command(command: str, env: Mapping[str, str] | None = None) -> str:
    """The hook's command line, pinning `env` (the settings the hook reads) with an `env VAR=value` prefix, since
    Claude Code runs hooks in its own environment. It hands the line to `sh -c`, so every word is shell-quoted: the
    path may hold a space, a redaction pattern `[`, `*` or quotes."""
    pinned = ["env", *(f"{k}={v}" for k, v in env.items())] if env else []
    return shlex.join([*pinned, command, "hook", "claude"])


def hook_entries(
    command: str, env: Mapping[str, str] | None = None, *, quoted: bool = True
) -> dict[str, dict[str, Any]]:
    """Our entry per event; `quoted=False` gives the form earlier installs wrote (uninstall removes it too)."""
    line = hook_command(command, env) if quoted else f"{command} hook claude"
    hook = {"type": "command", "command": line, "timeout": 10}
    return {event: ({"matcher": "*"} if matcher else {}) | {"hooks": [hook]} for event, matcher in HOOK_EVENTS.items()}


def pinned_in(line: str, command: str) -> dict[str, str] | None:
    """The settings a hook command line of ours pins ({} for none); None for a line that runs something else."""
    if line == f"{command} hook claude":  # the unquoted form of earlier installs, a space in the path and all
        return {}
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if words[-3:] != [command, "hook", "claude"]:
        return None
    prefix = words[:-3]
    if not prefix:
        return {}
    pairs = [word.partition("=") for word in prefix[1:]]
    if prefix[0] != "env" or not pairs or not all(sep and k.startswith("SKILLBANK_") for k, sep, _ in pairs):
        return None
    return {k: v for k, _, v in pairs}


def is_our_hook(entry: Any, event: str, command: str) -> bool:
    """Whether `entry` is exactly one that an install wrote for `event`, whatever settings it pinned then (so a
    reinstall with other settings replaces it, and uninstall removes it, in any environment)."""
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    if not (isinstance(hooks, list) and len(hooks) == 1 and isinstance(hooks[0], dict)):
        return False
    line = hooks[0].get("command")
    env = pinned_in(line, command) if isinstance(line, str) else None
    if env is None:
        return False
    return entry in (hook_entries(command, env)[event], hook_entries(command, quoted=False)[event])


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
    added: list[str] = []
    updated: list[str] = []
    present = False
    for event, entry in hook_entries(target.command, target.hook_env()).items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InstallError(f"{path}: hooks.{event} is not a list; fix it, then run again")
        ours = [i for i, e in enumerate(entries) if is_our_hook(e, event, target.command)]
        present = present or bool(ours)
        if ours == [] or entries[ours[0]] != entry or len(ours) > 1:
            (updated if ours else added).append(event)
        if ours:  # an earlier install's entry, perhaps pinning other settings: replaced where it is
            entries[ours[0]] = entry
            for i in reversed(ours[1:]):
                del entries[i]
        else:
            entries.append(entry)
    if not added and not updated:
        return Edit(old or "", "the skillbank hooks are already there", pre_install=False)
    what = [f"added skillbank hooks for {', '.join(added)}"] if added else []
    what += [f"updated skillbank hooks (the settings they pin) for {', '.join(updated)}"] if updated else []
    return Edit(dump_json(data, like=old), "; ".join(what), pre_install=not present)


def install(target: Target) -> list[Change]:
    path = servers_file(target)
    planned = [(path, _servers_edit(target, read_text(path), path, target.force))]  # check every file first
    if target.scope == "project":
        local = local_settings_file(target)
        planned.append((local, _approval_edit(read_text(local), local)))
    if target.hooks:
        settings = settings_file(target)
        planned.append((settings, _hooks_edit(target, read_text(settings), settings)))
    private = {path: 0o600} if target.scope == "user" else {}  # Claude Code keeps its account state there, 0600
    return save_all(planned, private)


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
    for event in HOOK_EVENTS:
        entries = hooks.get(event)
        if not isinstance(entries, list):
            continue
        kept = [e for e in entries if not is_our_hook(e, event, target.command)]
        if len(kept) < len(entries):
            dropped.append(event)
            entries[:] = kept
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
            deletable=True,  # ~/.claude.json too, once it holds nothing (install created it, or all else is gone)
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
