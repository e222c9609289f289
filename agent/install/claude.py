"""Claude Code: the server in `.mcp.json` (project) or `~/.claude.json` (user), and with `--hooks` the capture
hooks of `claude_settings.example.json` merged into `.claude/settings.json` (project) or `~/.claude/settings.json`.

A project server from `.mcp.json` waits for the user's approval before Claude Code starts it; running the install is
that approval, so project scope also lists the server in `enabledMcpjsonServers` of `.claude/settings.local.json`
(the per-user, uncommitted settings where Claude Code records it).

The hooks let skillbank capture Claude's own Edit/Bash calls and inject skills into prompts; each is an entry
`{"matcher"?, "hooks": [{"type": "command", "command": "<skillbank> hook claude", "timeout": 10}]}` appended to the
event's list, so the user's own hooks stay as they are and uninstall removes only these entries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.install.files import Change, InstallError, dump_json, finish, read_json, save
from agent.install.target import NAME, Target, drop_server, put_server

#: Claude Code hook events skillbank listens to; True where the event takes a tool matcher.
HOOK_EVENTS = {"SessionStart": False, "UserPromptSubmit": False, "PostToolUse": True, "PostToolUseFailure": True,
               "SessionEnd": False}  # fmt: skip


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


def hook_entries(command: str) -> dict[str, dict[str, Any]]:
    hook = {"type": "command", "command": f"{command} hook claude", "timeout": 10}
    return {event: ({"matcher": "*"} if matcher else {}) | {"hooks": [hook]} for event, matcher in HOOK_EVENTS.items()}


def _map(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InstallError(f"{path}: {key!r} is not an object; fix it, then run again")
    return value


def install(target: Target) -> list[Change]:
    path = servers_file(target)
    data = read_json(path)
    what = put_server(_map(data, "mcpServers", path), server_entry(target), path, target.force)
    changes = [save(path, dump_json(data), what or "the skillbank server is already there")]
    if target.scope == "project":
        changes.append(_approve(target))
    if target.hooks:
        changes.append(_merge_hooks(target))
    return changes


def _approve(target: Target) -> Change:
    path = local_settings_file(target)
    data = read_json(path)
    enabled = data.setdefault("enabledMcpjsonServers", [])
    if not isinstance(enabled, list):
        raise InstallError(f"{path}: enabledMcpjsonServers is not a list; fix it, then run again")
    if NAME in enabled:
        return save(path, dump_json(data), "the project's skillbank server is already approved")
    enabled.append(NAME)
    return save(path, dump_json(data), "approved the project's skillbank server (enabledMcpjsonServers)")


def _merge_hooks(target: Target) -> Change:
    path = settings_file(target)
    data = read_json(path)
    hooks = _map(data, "hooks", path)
    added = []
    for event, entry in hook_entries(target.command).items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InstallError(f"{path}: hooks.{event} is not a list; fix it, then run again")
        if entry not in entries:
            entries.append(entry)
            added.append(event)
    what = f"added skillbank hooks for {', '.join(added)}" if added else "the skillbank hooks are already there"
    return save(path, dump_json(data), what)


def uninstall(target: Target) -> list[Change]:
    path = servers_file(target)
    changes = []
    if path.exists():
        data = read_json(path)
        servers = data.get("mcpServers")
        removed = isinstance(servers, dict) and drop_server(servers, server_entry(target), path, target.force)
        if isinstance(servers, dict) and not servers:
            del data["mcpServers"]
        what = "removed the skillbank server" if removed else "no skillbank server"
        changes.append(finish(path, data, what, deletable=target.scope == "project"))
    local = local_settings_file(target)
    if target.scope == "project" and local.exists():
        data = read_json(local)
        enabled = data.get("enabledMcpjsonServers")
        if isinstance(enabled, list) and NAME in enabled:
            enabled.remove(NAME)
            if not enabled:
                del data["enabledMcpjsonServers"]
            changes.append(
                finish(local, data, "withdrew the approval of the project's skillbank server", deletable=True)
            )
    settings = settings_file(target)
    if settings.exists():
        data = read_json(settings)
        hooks = data.get("hooks")
        dropped = []
        if isinstance(hooks, dict):
            for event, entry in hook_entries(target.command).items():
                entries = hooks.get(event)
                if isinstance(entries, list) and entry in entries:
                    entries.remove(entry)
                    dropped.append(event)
                    if not entries:
                        del hooks[event]
            if not hooks:
                del data["hooks"]
        if dropped:
            what = f"removed skillbank hooks for {', '.join(dropped)}"
            changes.append(finish(settings, data, what, deletable=True))
    return changes
