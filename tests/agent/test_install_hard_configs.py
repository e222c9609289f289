"""Configs a user really has that install used to mishandle: not UTF-8, a UTF-8 BOM, read-only, a second file that
cannot be written after the first was, an install with other settings than the uninstall, the private
~/.claude.json, and a workspace written with `..`."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli import build_app


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    return result.exit_code, result.output


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.parametrize(
    ("client", "relative", "data"),
    [
        ("claude", ".claude.json", b'{"name": "caf\xe9"}\n'),
        ("codex", ".codex/config.toml", b'model = "caf\xe9"\n'),
    ],
)
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_config_that_is_not_utf8_is_refused_with_exit_2_and_no_traceback(
    home: Path, project: Path, client: str, relative: str, data: bytes, command: str
) -> None:
    config = home / relative
    config.parent.mkdir(exist_ok=True)
    config.write_bytes(data)
    code, out = run(command, client, "--scope", "user")
    assert code == 2, out
    assert "is not UTF-8 text (byte 0xe9 at offset" in out
    assert "Traceback" not in out
    assert config.read_bytes() == data


@pytest.mark.parametrize(
    ("client", "relative", "original"),
    [
        ("claude", ".claude.json", '\ufeff{\n  "mcpServers": {"other": {"command": "x"}}\n}\n'),
        ("codex", ".codex/config.toml", '\ufeffmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n'),
    ],
)
def test_a_config_with_a_utf8_bom_is_read_keeps_its_bom_and_gets_its_bytes_back(
    home: Path, project: Path, client: str, relative: str, original: str
) -> None:
    config = home / relative
    config.parent.mkdir(exist_ok=True)
    config.write_text(original, encoding="utf-8")
    before = digest(config)
    code, out = run("install", client, "--scope", "user")
    assert code == 0, out
    text = config.read_text(encoding="utf-8")
    assert text.startswith("\ufeff")
    body = text[1:]
    servers = json.loads(body)["mcpServers"] if client == "claude" else tomllib.loads(body)["mcp_servers"]
    assert sorted(servers) == ["other", "skillbank"]
    code, out = run("uninstall", client, "--scope", "user")
    assert code == 0, out
    assert digest(config) == before


@pytest.mark.parametrize("original", [b'model = "o3"\r\n\r\n[mcp_servers.other]\r\ncommand = "x"', b'model = "o3"'])
def test_a_codex_config_without_a_final_newline_keeps_its_line_endings(
    home: Path, project: Path, original: bytes
) -> None:
    """A CRLF config.toml with no final newline got a stray `\n\r\n` between its last line and skillbank's table."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_bytes(original)
    code, out = run("install", "codex", "--scope", "user")
    assert code == 0, out
    data = config.read_bytes()
    crlf = b"\r\n" in original
    assert (data.count(b"\r\n") == data.count(b"\n")) if crlf else (b"\r" not in data)
    assert data.startswith(original + (b"\r\n\r\n[mcp_servers.skillbank]" if crlf else b"\n\n[mcp_servers.skillbank]"))
    assert sorted(tomllib.loads(data.decode())["mcp_servers"]) == (["other", "skillbank"] if crlf else ["skillbank"])
    code, out = run("uninstall", "codex", "--scope", "user")
    assert code == 0, out
    assert config.read_bytes() == original


def test_a_read_only_config_is_refused_and_left_as_it_is(home: Path, project: Path) -> None:
    config = home / ".claude.json"
    config.write_text('{"mcpServers": {}}\n')
    config.chmod(0o444)
    code, out = run("install", "claude", "--scope", "user")
    assert code == 2, out
    assert "is read-only (mode 444); make it writable (chmod u+w)" in out
    assert config.read_text() == '{"mcpServers": {}}\n'
    assert stat.S_IMODE(config.stat().st_mode) == 0o444
    assert not (home / ".claude.json.skillbank.bak").exists()


def test_a_file_in_the_way_of_a_later_config_is_found_before_anything_is_written(home: Path, project: Path) -> None:
    mcp = project / ".mcp.json"
    mcp.write_text('{"mcpServers": {"other": {"command": "x"}}}\n')
    (project / ".claude").write_text("not a folder")
    before = digest(mcp)
    code, out = run("install", "claude", "--workspace", str(project))
    assert code == 2, out
    assert "settings.local.json cannot be read (Not a directory)" in out
    assert digest(mcp) == before
    assert not (project / ".mcp.json.skillbank.bak").exists()


@pytest.mark.parametrize("existed", [True, False])
def test_when_a_later_file_cannot_be_written_the_earlier_ones_are_put_back(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, existed: bool
) -> None:
    """The disk fills (or a permission stops a user) between `.mcp.json` and `.claude/settings.local.json`: the
    install must leave no half-registered server behind, nor its backup, nor the `.claude` folder it made."""
    import agent.install.files as files

    mcp = project / ".mcp.json"
    if existed:
        mcp.write_text('{"mcpServers": {"other": {"command": "x"}}}\n')
    before = digest(mcp) if existed else None
    real_write = files._atomic_write

    def full_disk(path: Path, text: str, new_mode: int | None = None) -> None:
        if path.name == "settings.local.json":
            raise OSError(28, "No space left on device", str(path))
        real_write(path, text, new_mode)

    monkeypatch.setattr(files, "_atomic_write", full_disk)
    code, out = run("install", "claude", "--workspace", str(project))
    assert code == 2, out
    assert "settings.local.json cannot be written (No space left on device)" in out
    assert f"{mcp} put back as it was; nothing was changed" in out
    assert (digest(mcp) if existed else mcp.exists()) == (before if existed else False)
    assert not (project / ".mcp.json.skillbank.bak").exists()
    assert not (project / ".claude").exists()


def test_uninstall_gives_the_bytes_back_when_install_ran_with_other_settings(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = home / ".claude.json"
    original = '{"mcpServers": {"other": {"command": "npx", "args": ["-y", "x"]}}, "theme": "dark"}\n'
    config.write_text(original)
    monkeypatch.setenv("SKILLBANK_HOME", str(home / "sbdata"))
    assert run("install", "claude", "--scope", "user")[0] == 0
    monkeypatch.delenv("SKILLBANK_HOME")
    code, out = run("uninstall", "claude", "--scope", "user")
    assert code == 0, out
    assert config.read_text() == original


@pytest.mark.usefixtures("umask_022")
def test_a_claude_json_install_creates_is_private_and_uninstall_removes_it(home: Path, project: Path) -> None:
    config = home / ".claude.json"
    assert run("install", "claude", "--scope", "user")[0] == 0
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    code, out = run("uninstall", "claude", "--scope", "user")
    assert code == 0, out
    assert not config.exists()
    assert not (home / ".claude.json.skillbank.bak").exists()


def test_a_workspace_written_with_dot_dot_is_the_same_workspace(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    assert run("install", "cline")[0] == 0
    monkeypatch.chdir(project.parent)
    code, out = run("install", "cline", "--workspace", f"{project.name}/../{project.name}/.")
    assert code == 0, out
    assert "different MCP server" not in out
    assert ".." not in out
