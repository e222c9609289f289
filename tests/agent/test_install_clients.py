"""What install writes works in the real clients: Codex reads every layout of `mcp_servers`, Claude Code starts a
server the user once turned off, the hook command survives `sh -c`, and the clients outwait `run_tests`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from agent.install import Target, install, uninstall
from mcp_server.app import create_server
from mcp_server.cli import build_app
from mcp_server.services import build_deps
from mcp_server.settings import Settings

ROOT = Path(__file__).parents[2]
BIN = ROOT / ".ci" / "state" / "node" / "node_modules" / ".bin"
EXE = str(Path(sys.executable).with_name("skillbank").absolute())


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "CLINE_DIR", "CLINE_DATA_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SKILLBANK_HOME", str(tmp_path / "bank"))  # pinned in the entries: the server uses it
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)  # Claude Code finds the project by its repo
    return project


def cli(*args: str) -> str:
    result = CliRunner().invoke(build_app(), list(args))
    assert result.exit_code == 0, result.output
    return result.output


def client(name: str) -> str:
    """The real npm client, found as tests/e2e finds it (SKILLBANK_NODE_BIN, then .ci's install, then PATH)."""
    for bin_dir in (os.environ.get("SKILLBANK_NODE_BIN"), str(BIN)):
        if bin_dir and (Path(bin_dir) / name).exists():
            return str(Path(bin_dir) / name)
    found = shutil.which(name)
    if found is None:
        if os.environ.get("SKILLBANK_REQUIRE_E2E") == "1":
            pytest.fail(f"the npm client {name!r} is required in CI but missing")
        pytest.skip(f"the npm client {name!r} is not installed (run .ci/run, or set SKILLBANK_NODE_BIN)")
    return found


@pytest.mark.parametrize(
    "config",
    [
        '[mcp_servers.a]\ncommand = "echo"\n\n[profiles.x]\nmodel = "m"\n\n[mcp_servers.b]\ncommand = "echo"\n',
        'mcp_servers = { a = { command = "echo" } }\n',
        'mcp_servers.a.command = "echo"\n',
    ],
    ids=["split-by-another-table", "inline", "dotted-keys"],
)
def test_codex_install_takes_any_layout_of_mcp_servers_and_codex_reads_the_result(
    home: Path, project: Path, config: str
) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(config)
    cli("install", "codex")
    servers = tomllib.loads(path.read_text())["mcp_servers"]
    assert servers["a"] == {"command": "echo"}
    assert servers["skillbank"]["command"] == EXE
    listed = subprocess.run(
        [client("codex"), "mcp", "list", "--json"], capture_output=True, text=True, timeout=120, cwd=project
    )
    assert listed.returncode == 0, listed.stderr
    entries = {entry["name"]: entry for entry in json.loads(listed.stdout)}
    assert {"a", "skillbank"} <= set(entries)
    assert entries["skillbank"]["transport"]["command"] == EXE
    assert entries["skillbank"]["tool_timeout_sec"] == 900
    cli("uninstall", "codex")
    assert path.read_text() == config


def _claude_lists(project: Path) -> str:
    listed = subprocess.run([client("claude"), "mcp", "list"], capture_output=True, text=True, timeout=120, cwd=project)
    return listed.stdout + listed.stderr


def test_claude_project_install_turns_back_on_a_server_the_user_turned_off(home: Path, project: Path) -> None:
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    original = '{\n  "disabledMcpjsonServers": ["skillbank", "old"],\n  "permissions": {"allow": []}\n}\n'
    local.write_text(original)
    out = cli("install", "claude", "--workspace", str(project))
    assert "took it out of disabledMcpjsonServers" in out
    data = json.loads(local.read_text())
    assert data["disabledMcpjsonServers"] == ["old"]
    assert data["enabledMcpjsonServers"] == ["skillbank"]
    listed = _claude_lists(project)
    assert "skillbank:" in listed, listed  # was "No MCP servers configured": Claude Code hides a disabled one
    assert "Pending approval" not in listed
    cli("uninstall", "claude", "--workspace", str(project))
    assert local.read_text() == original
    cli("install", "claude", "--workspace", str(project))
    local.write_text(local.read_text().replace('"allow": []', '"allow": ["Bash(ls)"]'))  # edited since install
    out = cli("uninstall", "claude", "--workspace", str(project))
    assert "listed it in disabledMcpjsonServers again" in out
    assert json.loads(local.read_text()) == {
        "disabledMcpjsonServers": ["old", "skillbank"],
        "permissions": {"allow": ["Bash(ls)"]},
    }


def test_the_hook_command_runs_under_sh_when_the_skillbank_path_has_a_space(tmp_path: Path) -> None:
    tools = tmp_path / "my tools"
    tools.mkdir()
    (tools / "skillbank").symlink_to(EXE)
    project = tmp_path / "project"
    project.mkdir()
    target = Target(client="claude", scope="project", workspace=project, pin_workspace=False, home=tmp_path,
                    command=str(tools / "skillbank"), env={}, hooks=True)  # fmt: skip
    install(target)
    settings = project / ".claude" / "settings.json"
    hooks = json.loads(settings.read_text())["hooks"]
    command = hooks["SessionEnd"][0]["hooks"][0]["command"]
    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path / "bank")}
    ran = subprocess.run(["sh", "-c", f"{command} --help"], capture_output=True, text=True, timeout=60, env=env)
    assert ran.returncode == 0, ran.stderr  # unquoted: sh ran '.../my' and answered 127
    assert "hook" in ran.stdout.lower()
    uninstall(target)
    assert not settings.exists()


def test_uninstall_also_removes_the_unquoted_hooks_earlier_installs_wrote(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    command = str(tmp_path / "my tools" / "skillbank")
    legacy = {"type": "command", "command": f"{command} hook claude", "timeout": 10}
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [legacy]}]}}))
    target = Target(client="claude", scope="project", workspace=project, pin_workspace=False, home=tmp_path,
                    command=command, env={})  # fmt: skip
    changes = uninstall(target)
    assert [c.what for c in changes] == ["removed skillbank hooks for SessionEnd"]
    assert not (project / ".claude").exists()


@pytest.mark.anyio
async def test_cline_and_codex_wait_longer_than_run_tests_at_its_default_limit(
    home: Path, project: Path, test_settings: Settings
) -> None:
    async with Client(create_server(build_deps(test_settings))) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
    default = tools["run_tests"].input_schema["properties"]["timeout_s"]["default"]
    cli("install", "cline", "--workspace", str(project))
    cli("install", "codex")
    cline = json.loads((home / ".cline/data/settings/cline_mcp_settings.json").read_text())["mcpServers"]["skillbank"]
    codex = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["skillbank"]
    assert cline["timeout"] > default  # a run that reaches its limit still answers before the client gives up
    assert codex["tool_timeout_sec"] > default
    assert cline["timeout"] == codex["tool_timeout_sec"]
