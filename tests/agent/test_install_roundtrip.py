"""install then uninstall gives the user's config files back: their bytes, their backup, their link, their mode."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli import build_app


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def cli(*args: str) -> str:
    result = CliRunner().invoke(build_app(), list(args))
    assert result.exit_code == 0, result.output
    return result.output


def backup(path: Path) -> Path:
    return path.with_name(path.name + ".skillbank.bak")


HAND_FORMATTED = [
    '{\n    "mcpServers": {"other": {"command": "echo"}}\n}\n',  # 4 spaces, an object kept on one line
    '{"mcpServers": {"other": {"command": "caf\\u00e9"}}}',  # \u escapes, no final newline
    '{\n\t"mcpServers": {\n\t\t"other": {"command": "echo"}\n\t}\n}',  # tabs
]


@pytest.mark.parametrize("original", HAND_FORMATTED)
def test_claude_install_then_uninstall_gives_the_original_bytes_back(home: Path, project: Path, original: str) -> None:
    mcp = project / ".mcp.json"
    mcp.write_text(original)
    cli("install", "claude", "--workspace", str(project), "--hooks")
    assert backup(mcp).read_text() == original
    out = cli("uninstall", "claude", "--workspace", str(project))
    assert mcp.read_text() == original, out
    assert backup(mcp).read_text() == original  # uninstall did not overwrite the pre-install backup
    assert not (project / ".claude").exists()


def test_an_edited_config_loses_only_the_entry_and_keeps_its_indent_escapes_and_ending(
    home: Path, project: Path
) -> None:
    mcp = project / ".mcp.json"
    mcp.write_text(
        '{\n    "mcpServers": {\n        "other": {\n            "command": "caf\\u00e9"\n        }\n    }\n}'
    )
    cli("install", "claude", "--workspace", str(project))
    data = json.loads(mcp.read_text())
    data["mcpServers"]["mine"] = {"command": "added-after-install"}
    mcp.write_text(json.dumps(data, indent=4))  # now it is not what install wrote: the backup cannot come back
    cli("uninstall", "claude", "--workspace", str(project))
    del data["mcpServers"]["skillbank"]
    assert mcp.read_text() == json.dumps(data, indent=4)


def test_the_backup_of_the_pre_install_file_survives_every_install_and_uninstall(home: Path, project: Path) -> None:
    mcp = project / ".mcp.json"
    first = '{\n    "mcpServers": {"a": {"command": "a"}}\n}\n'
    mcp.write_text(first)
    cli("install", "claude", "--workspace", str(project))
    cli("install", "claude", "--workspace", str(project), "--hooks")  # over the first install: the backup stays
    assert backup(mcp).read_text() == first
    cli("uninstall", "claude", "--workspace", str(project))
    assert mcp.read_text() == first
    assert backup(mcp).read_text() == first
    second = '{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}\n'  # the user's own change since
    mcp.write_text(second)
    cli("install", "claude", "--workspace", str(project))
    assert backup(mcp).read_text() == second  # the file as it was before this install
    cli("uninstall", "claude", "--workspace", str(project))
    assert mcp.read_text() == second
    assert backup(mcp).read_text() == second


CODEX_CONFIGS = [
    'model = "gpt-5"\n',
    'model = "gpt-5"',
    'model = "gpt-5"\n\n[mcp_servers.a]\ncommand = "echo"\n',
    '# comment\n[mcp_servers.a]\ncommand = "echo"\n\n# next\n[profiles.x]\nmodel = "m"\n',
    '[mcp_servers.a]\ncommand = "echo"\n# about a\n\n# profiles\n[profiles.x]\nmodel = "m"\n',
    '[mcp_servers.a]\ncommand = "echo"\n[profiles.x]\nmodel = "m"\n',
    'model = "x"\n\n# the end\n',
]


@pytest.mark.parametrize("original", CODEX_CONFIGS)
def test_codex_install_then_uninstall_gives_the_original_bytes_back(home: Path, project: Path, original: str) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(original)
    cli("install", "codex")
    assert backup(config).read_text() == original
    cli("uninstall", "codex")
    assert config.read_text() == original
    assert backup(config).read_text() == original


@pytest.mark.parametrize("original", CODEX_CONFIGS)
def test_codex_uninstall_of_an_edited_config_leaves_no_blank_line_and_keeps_the_comments(
    home: Path, project: Path, original: str
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(original)
    cli("install", "codex")
    config.write_text("approval_policy = 'never'\n" + config.read_text())  # not what install wrote any more
    cli("uninstall", "codex")
    assert config.read_text() == "approval_policy = 'never'\n" + original.rstrip("\n") + "\n"


DOTTED_ROOT = [
    'model = "o3"\nmcp_servers.other.command = "x"\nmcp_servers.other.args = ["a"]\n\n[profiles.fast]\nmodel = "x"\n',
    'mcp_servers.other.command = "x"\nmodel = "o3"\n',
    'mcp_servers.other = { command = "x" }\nmcp_servers.two = { command = "y" }\n',
]


@pytest.mark.parametrize("original", DOTTED_ROOT)
def test_codex_servers_as_dotted_root_keys_keep_every_key_through_install_and_uninstall(
    home: Path, project: Path, original: str
) -> None:
    """tomlkit put the new table after the first dotted key, and the keys after it moved into skillbank's table:
    `other` lost its args, the user's `model` became a key of skillbank's tools, server `two` was gone."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(original)
    cli("install", "codex")
    installed = tomllib.loads(config.read_text())
    skillbank = installed["mcp_servers"].pop("skillbank")
    assert skillbank["tools"] == {"search_skills": {"approval_mode": "approve"}}
    assert installed == tomllib.loads(original)
    assert "unchanged" in cli("install", "codex")
    config.write_text("approval_policy = 'never'\n" + config.read_text())  # edited since: only the entry goes
    cli("uninstall", "codex")
    assert tomllib.loads(config.read_text()) == {"approval_policy": "never", **tomllib.loads(original)}


def test_codex_puts_the_table_above_the_comments_that_lead_into_the_next_table(home: Path, project: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('[mcp_servers.a]\ncommand = "echo"\n\n# fast profile\n[profiles.x]\nmodel = "m"\n')
    cli("install", "codex")
    text = config.read_text()
    assert text.startswith('[mcp_servers.a]\ncommand = "echo"\n\n[mcp_servers.skillbank]\n')
    assert text.endswith('approval_mode = "approve"\n\n# fast profile\n[profiles.x]\nmodel = "m"\n')


def test_codex_replacing_an_earlier_install_keeps_its_backup_and_uninstall_restores_the_original(
    home: Path, project: Path, tmp_path: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = "# mine\nmodel = 'o3'\n"
    config.write_text(original)
    cli("install", "codex")
    other = tmp_path / "other"
    other.mkdir()
    cli("install", "codex", "--workspace", str(other), "--force")  # replaces the entry: the file held ours already
    assert tomllib.loads(config.read_text())["mcp_servers"]["skillbank"]["args"] == ["serve", "--workspace", str(other)]
    assert backup(config).read_text() == original
    cli("uninstall", "codex", "--workspace", str(other))
    assert config.read_text() == original


def test_a_symlinked_config_is_changed_through_the_link(home: Path, project: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "codex.toml"
    real.write_text('model = "gpt-5"\n')
    link = home / ".codex" / "config.toml"
    link.parent.mkdir()
    link.symlink_to(real)
    cli("install", "codex")
    assert link.is_symlink()
    assert link.resolve() == real
    assert "skillbank" in tomllib.loads(real.read_text())["mcp_servers"]
    assert backup(link).read_text() == 'model = "gpt-5"\n'  # the target's text, beside the path Codex reads
    assert not backup(link).is_symlink()
    assert sorted(p.name for p in dotfiles.iterdir()) == ["codex.toml"]
    cli("uninstall", "codex")
    assert link.is_symlink()
    assert real.read_text() == 'model = "gpt-5"\n'


def test_a_symlinked_json_config_is_changed_through_the_link(home: Path, project: Path, tmp_path: Path) -> None:
    real = tmp_path / "shared.mcp.json"
    real.write_text('{"mcpServers": {}}\n')
    (project / ".mcp.json").symlink_to(real)
    cli("install", "claude", "--workspace", str(project))
    assert (project / ".mcp.json").is_symlink()
    assert "skillbank" in json.loads(real.read_text())["mcpServers"]
    cli("uninstall", "claude", "--workspace", str(project))
    assert (project / ".mcp.json").is_symlink()
    assert real.read_text() == '{"mcpServers": {}}\n'


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_files_install_creates_get_the_umask_mode_and_existing_files_keep_theirs(home: Path, project: Path) -> None:
    user_config = home / ".claude.json"
    user_config.write_text('{"numStartups": 1}\n')
    user_config.chmod(0o600)
    cli("install", "claude", "--workspace", str(project), "--hooks")
    cli("install", "claude", "--scope", "user", "--workspace", str(project))
    created = [
        project / ".mcp.json",
        project / ".claude" / "settings.local.json",
        project / ".claude" / "settings.json",
    ]
    assert [_mode(p) for p in created] == [0o644] * 3  # as Claude Code writes them under umask 022
    assert _mode(user_config) == 0o600
    os.umask(0o027)
    cli("install", "codex")
    assert _mode(home / ".codex" / "config.toml") == 0o640
