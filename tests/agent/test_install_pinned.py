"""The SKILLBANK_* settings set at install are pinned where the client starts skillbank: the server's `env` for
every client, and an `env VAR=...` prefix on Claude Code's hook command (Claude Code runs hooks in its own
environment). A relative data dir is pinned absolute; a bad setting is refused before anything is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.install.target import HOOK_ENV, PINNED_ENV
from mcp_server.cli import build_app
from mcp_server.cli.hook import HOOK_FIELDS
from mcp_server.settings import Settings
from skills_store.trajectories.store import SQLiteTrajectoryStore

EXE = str(Path(sys.executable).with_name("skillbank").absolute())
PATTERNS = '["ACME-[0-9]{6}"]'


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    return result.exit_code, result.output


def hook_line(project: Path, event: str = "PostToolUse") -> str:
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"][event]
    return hooks[-1]["hooks"][0]["command"]


def test_every_setting_but_the_token_and_the_workspace_is_pinned_and_the_hook_pins_what_it_reads() -> None:
    every = {f"SKILLBANK_{name.upper()}" for name in Settings.model_fields}
    assert set(PINNED_ENV) == every - {"SKILLBANK_TOKEN", "SKILLBANK_WORKSPACE"}
    assert tuple(f"SKILLBANK_{name.upper()}" for name in HOOK_FIELDS) == HOOK_ENV


def server_env(client: str, home: Path, project: Path) -> dict[str, str]:
    if client == "claude":
        return json.loads((project / ".mcp.json").read_text())["mcpServers"]["skillbank"]["env"]
    if client == "codex":
        return tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["skillbank"]["env"]
    path = home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
    return json.loads(path.read_text())["mcpServers"]["skillbank"]["env"]


@pytest.mark.parametrize("client", ["claude", "codex", "cline"])
def test_the_settings_set_at_install_are_pinned_in_the_server_env_of_every_client_never_the_token(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, client: str
) -> None:
    monkeypatch.chdir(project)
    settings = {"SKILLBANK_HOME": "bank", "SKILLBANK_REDACT_PATTERNS": PATTERNS, "SKILLBANK_SUGGEST_THRESHOLD": "0.9",
                "SKILLBANK_REVIEW": "1", "SKILLBANK_NO_SKILLS": "1", "SKILLBANK_EMBEDDER": "hash"}  # fmt: skip
    for variable, value in {**settings, "SKILLBANK_TOKEN": "secret", "SKILLBANK_WORKSPACE": "/elsewhere"}.items():
        monkeypatch.setenv(variable, value)
    code, out = cli("install", client, "--workspace", str(project))
    assert code == 0, out
    assert server_env(client, home, project) == {**settings, "SKILLBANK_HOME": str(project / "bank")}


def test_the_hook_command_pins_its_settings_so_claude_code_without_them_captures_into_the_pinned_bank(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKILLBANK_HOME", "bank")  # relative: pinned as the directory it means here
    monkeypatch.setenv("SKILLBANK_REDACT_PATTERNS", PATTERNS)
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")  # not read by the hook: not in its command
    code, out = cli("install", "claude", "--hooks", "--workspace", str(project))
    assert code == 0, out
    line = hook_line(project)
    assert line == (f"env SKILLBANK_HOME={tmp_path / 'bank'} 'SKILLBANK_REDACT_PATTERNS={PATTERNS}' {EXE} hook claude")
    event = {"session_id": "s1", "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Bash",
             "tool_input": {"command": "deploy --key ACME-123456"}, "tool_response": {"stdout": "ok"}}  # fmt: skip
    bare = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}  # Claude Code's environment
    ran = subprocess.run(["sh", "-c", line], input=json.dumps(event), cwd=project, env=bare, capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    with SQLiteTrajectoryStore(tmp_path / "bank" / "trajectories.db") as store:
        args = store.get("claude-s1").steps[0].args
    assert "ACME-123456" not in json.dumps(args)
    assert not (home / ".local" / "share" / "skillbank").exists()


def test_a_reinstall_with_other_settings_replaces_the_hooks_and_uninstall_anywhere_removes_them(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-hook"}]}]}}
    settings.write_text(json.dumps(mine))
    monkeypatch.setenv("SKILLBANK_HOME", str(project / "one"))
    assert cli("install", "claude", "--hooks", "--workspace", str(project))[0] == 0
    monkeypatch.setenv("SKILLBANK_HOME", str(project / "two"))
    code, out = cli("install", "claude", "--hooks", "--workspace", str(project), "--force")  # the server's env too
    assert code == 0, out
    assert "updated skillbank hooks (the settings they pin) for SessionStart, UserPromptSubmit" in out
    hooks = json.loads(settings.read_text())["hooks"]
    assert [len(entries) for entries in hooks.values()] == [2, 1, 1, 1, 1]  # one of ours per event, mine kept
    assert hook_line(project) == f"env SKILLBANK_HOME={project / 'two'} {EXE} hook claude"
    monkeypatch.delenv("SKILLBANK_HOME")
    code, out = cli("uninstall", "claude", "--workspace", str(project))
    assert code == 0, out
    assert json.loads(settings.read_text()) == mine


def test_a_bad_setting_is_refused_at_install_before_any_file_is_written(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLBANK_REDACT_PATTERNS", "ACME-[0-9]+")
    code, out = cli("install", "claude", "--hooks", "--workspace", str(project))
    assert code == 2
    assert "SKILLBANK_REDACT_PATTERNS is not JSON" in out
    assert list(project.iterdir()) == []
