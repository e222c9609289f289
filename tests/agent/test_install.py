"""`skillbank install|uninstall claude|codex|cline` on temp HOME dirs: kept content, backups, idempotence, refusals."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli import build_app

ROOT = Path(__file__).parents[2]
EXE = str(Path(sys.executable).with_name("skillbank").absolute())


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    return result.exit_code, result.output


def test_claude_project_install_adds_the_server_keeps_others_and_is_idempotent(home: Path, project: Path) -> None:
    mcp = project / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"other": {"command": "other-server"}}}))
    code, out = cli("install", "claude", "--workspace", str(project))
    assert code == 0, out
    assert f"updated  {mcp}: added the skillbank server (backup: {mcp}.skillbank.bak)" in out
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers["other"] == {"command": "other-server"}
    assert servers["skillbank"] == {"type": "stdio", "command": EXE, "args": ["serve"], "env": {}}
    assert json.loads(Path(f"{mcp}.skillbank.bak").read_text()) == {
        "mcpServers": {"other": {"command": "other-server"}}
    }
    local = project / ".claude" / "settings.local.json"
    assert json.loads(local.read_text()) == {"enabledMcpjsonServers": ["skillbank"]}  # installing is the approval
    before = mcp.read_text()
    code, out = cli("install", "claude", "--workspace", str(project))
    assert code == 0
    assert "unchanged" in out
    assert mcp.read_text() == before
    code, out = cli("uninstall", "claude", "--workspace", str(project))
    assert code == 0, out
    assert json.loads(mcp.read_text()) == {"mcpServers": {"other": {"command": "other-server"}}}
    assert not local.exists()


def test_claude_project_approval_keeps_the_users_local_settings(home: Path, project: Path) -> None:
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(ls)"]}, "enabledMcpjsonServers": ["docs"]}
    local.write_text(json.dumps(mine))
    assert cli("install", "claude", "--workspace", str(project))[0] == 0
    assert json.loads(local.read_text())["enabledMcpjsonServers"] == ["docs", "skillbank"]
    assert cli("uninstall", "claude", "--workspace", str(project))[0] == 0
    assert json.loads(local.read_text()) == mine


def test_claude_user_install_with_hooks_merges_and_uninstall_restores_exactly(home: Path, project: Path) -> None:
    config = home / ".claude.json"
    original = {"numStartups": 3, "mcpServers": {}, "projects": {"/x": {"allowedTools": []}}}
    config.write_text(json.dumps(original, indent=2))
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    my_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-hook"}]}
    mine = {"model": "opus", "hooks": {"PostToolUse": [my_hook]}}
    settings.write_text(json.dumps(mine))
    code, out = cli("install", "claude", "--scope", "user", "--hooks", "--workspace", str(project))
    assert code == 0, out
    data = json.loads(config.read_text())
    assert data["numStartups"] == 3
    assert data["mcpServers"]["skillbank"]["args"] == ["serve", "--workspace", str(project)]
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["PostToolUse"][0]["hooks"][0]["command"] == "my-hook"
    assert hooks["PostToolUse"][1]["hooks"][0]["command"] == f"{EXE} hook claude"
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "SessionEnd"}
    assert (
        cli("install", "claude", "--scope", "user", "--hooks", "--workspace", str(project))[1].count("unchanged") == 2
    )
    code, out = cli("uninstall", "claude", "--scope", "user", "--workspace", str(project))
    assert code == 0, out
    assert config.read_text() == json.dumps(original, indent=2)  # the backup's bytes, its empty mcpServers too
    assert settings.read_text() == json.dumps(mine)


def test_the_example_settings_server_block_is_what_install_writes_to_mcp_json(home: Path, project: Path) -> None:
    """Its `mcpServers` block goes to `.mcp.json` (Claude Code reads no server from a settings file): same shape."""
    example = json.loads((ROOT / "claude_settings.example.json").read_text())["mcpServers"]["skillbank"]
    assert cli("install", "claude", "--workspace", str(project))[0] == 0
    written = json.loads((project / ".mcp.json").read_text())["mcpServers"]["skillbank"]
    assert set(example) <= set(written) | {"env"}
    assert example["type"] == written["type"] == "stdio"
    assert example["args"][0] == written["args"][0] == "serve"


def test_the_installed_hooks_are_those_of_the_example_settings(home: Path, project: Path) -> None:
    assert cli("install", "claude", "--hooks", "--workspace", str(project))[0] == 0
    installed = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    example = json.loads((ROOT / "claude_settings.example.json").read_text())["hooks"]
    for entries in example.values():
        for entry in entries:
            for hook in entry["hooks"]:
                hook["command"] = hook["command"].replace("skillbank", EXE, 1)
    assert installed == example
    assert cli("uninstall", "claude", "--workspace", str(project))[0] == 0
    assert not (project / ".claude").exists()
    assert not (project / ".mcp.json").exists()


def test_a_different_server_of_the_same_name_is_refused_unless_forced(home: Path, project: Path) -> None:
    mcp = project / ".mcp.json"
    theirs = {"mcpServers": {"skillbank": {"command": "npx", "args": ["some-other-skillbank"]}}}
    mcp.write_text(json.dumps(theirs))
    code, out = cli("install", "claude", "--workspace", str(project))
    assert code == 2
    assert "already has a different MCP server named 'skillbank'" in out
    assert "--force" in out
    assert json.loads(mcp.read_text()) == theirs
    assert cli("uninstall", "claude", "--workspace", str(project))[0] == 2
    code, out = cli("install", "claude", "--workspace", str(project), "--force")
    assert code == 0, out
    assert json.loads(mcp.read_text())["mcpServers"]["skillbank"]["command"] == EXE
    assert json.loads(Path(f"{mcp}.skillbank.bak").read_text()) == theirs


def test_a_config_that_is_not_json_is_refused_and_left_alone(home: Path, project: Path) -> None:
    (project / ".mcp.json").write_text("{not json")
    code, out = cli("install", "claude", "--workspace", str(project))
    assert code == 2
    assert "is not valid JSON" in out
    assert (project / ".mcp.json").read_text() == "{not json"


CODEX = """# my codex config
model = "o4-mini"  # the default model

[mcp_servers.docs]
command = "docs-server"  # keep me

[profiles.fast]
model = "gpt-4.1-mini"
"""


def test_codex_install_keeps_comments_and_order_and_uninstall_restores_the_text(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX)
    monkeypatch.setenv("SKILLBANK_HOME", str(home / "data"))
    monkeypatch.setenv("SKILLBANK_TOKEN", "secret")
    code, out = cli("install", "codex", "--workspace", str(project))
    assert code == 0, out
    text = config.read_text()
    assert '[mcp_servers.docs]\ncommand = "docs-server"  # keep me\n\n[mcp_servers.skillbank]\n' in text
    assert 'approval_mode = "approve"\n\n[profiles.fast]\n' in text
    assert "# keep me" in text
    assert "secret" not in text
    server = tomllib.loads(text)["mcp_servers"]["skillbank"]
    assert server == {"command": EXE, "args": ["serve", "--workspace", str(project)],
                      "env": {"SKILLBANK_HOME": str(home / "data")}, "startup_timeout_sec": 60,
                      "tool_timeout_sec": 900, "required": True,
                      "tools": {"search_skills": {"approval_mode": "approve"}}}  # fmt: skip
    assert "unchanged" in cli("install", "codex", "--workspace", str(project))[1]
    code, out = cli("uninstall", "codex", "--workspace", str(project))
    assert code == 0, out
    assert config.read_text() == CODEX


def test_codex_honours_codex_home_and_refuses_project_scope(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert cli("install", "codex")[0] == 0
    assert "skillbank" in tomllib.loads((tmp_path / "codex-home" / "config.toml").read_text())["mcp_servers"]
    code, out = cli("install", "codex", "--scope", "project")
    assert code == 2
    assert "--scope user" in out
    assert cli("install", "codex", "--hooks")[0] == 2


def test_cline_install_writes_the_cli_and_the_vscode_settings_with_auto_approve_and_timeout(
    home: Path, project: Path
) -> None:
    (home / ".config" / "Code" / "User").mkdir(parents=True)
    code, out = cli("install", "cline", "--workspace", str(project))
    assert code == 0, out
    cli_file = home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
    ext_file = home / ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
    for path in (cli_file, ext_file):
        entry = json.loads(path.read_text())["mcpServers"]["skillbank"]
        assert entry["args"] == ["serve", "--workspace", str(project)]
        assert entry["autoApprove"] == ["search_skills"]
        assert entry["timeout"] == 900  # outlasts run_tests at its default 600 s limit, as Codex's tool_timeout_sec
        assert entry["disabled"] is False
    assert cli("install", "cline", "--workspace", str(project))[1].count("unchanged") == 2
    code, out = cli("uninstall", "cline", "--workspace", str(project))
    assert code == 0, out
    assert not cli_file.exists()
    assert not ext_file.exists()


def test_cline_install_writes_the_extension_settings_of_every_editor_built_on_vscode(home: Path, project: Path) -> None:
    editors = ["Code - Insiders", "VSCodium", "Cursor"]
    for editor in editors:
        (home / ".config" / editor / "User").mkdir(parents=True)
    code, out = cli("install", "cline", "--workspace", str(project))
    assert code == 0, out
    files = [home / ".config" / e / "User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
             for e in editors]  # fmt: skip
    for path in files:
        assert json.loads(path.read_text())["mcpServers"]["skillbank"]["args"] == ["serve", "--workspace", str(project)]
    assert not (home / ".config" / "Code").exists()  # an editor that is not installed gets nothing
    assert cli("uninstall", "cline", "--workspace", str(project))[0] == 0
    assert not any(path.exists() for path in files)


def test_the_examples_are_what_install_writes(home: Path, project: Path) -> None:
    examples = ROOT / "examples"
    claude = json.loads((examples / "claude" / ".mcp.json").read_text())["mcpServers"]["skillbank"]
    cli("install", "claude", "--workspace", str(project), "--hooks")
    written = json.loads((project / ".mcp.json").read_text())["mcpServers"]["skillbank"]
    assert set(claude) == set(written)
    assert claude["args"] == written["args"]
    hooks = json.loads((examples / "claude" / "settings.json").read_text())["hooks"]
    assert set(hooks) == set(json.loads((project / ".claude" / "settings.json").read_text())["hooks"])
    codex = tomllib.loads((examples / "codex" / "config.toml").read_text())["mcp_servers"]["skillbank"]
    cli("install", "codex", "--workspace", str(project))
    assert set(codex) >= set(tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["skillbank"])
    cline = json.loads((examples / "cline" / "cline_mcp_settings.json").read_text())["mcpServers"]["skillbank"]
    cli("install", "cline", "--workspace", str(project))
    cline_written = json.loads((home / ".cline/data/settings/cline_mcp_settings.json").read_text())["mcpServers"]
    assert set(cline) == set(cline_written["skillbank"])
