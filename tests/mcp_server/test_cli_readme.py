"""The README's CLI section lists every command the CLI has, so a new command cannot ship undocumented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli import build_app

README = Path(__file__).resolve().parents[2] / "README.md"
#: A command row of `--help`: the box border, the name, then its one-line help.
ROW = re.compile(r"^│ (?P<name>[a-z][a-z-]*)\s{2,}\S", re.MULTILINE)


def cli_block() -> str:
    text = README.read_text()
    section = text[text.index("\n## CLI\n") :]
    section = section[: section.index("\n## ", 1)]
    return section.split("```", 2)[1]


def commands(runner: CliRunner, path: list[str]) -> list[list[str]]:
    """Every leaf command under `path`, read from `--help` as a user sees it."""
    out = runner.invoke(build_app(), [*path, "--help"], env={"COLUMNS": "200", "TERM": "dumb"})
    assert out.exit_code == 0, out.output
    if "Commands" not in out.output:
        return [path]
    below = out.output[out.output.index("Commands") :]
    return [leaf for m in ROW.finditer(below) for leaf in commands(runner, [*path, m["name"]])]


@pytest.fixture(scope="module")
def every_command() -> list[list[str]]:
    return commands(CliRunner(), [])


def test_every_command_is_in_the_readme_cli_block(every_command: list[list[str]]) -> None:
    block = cli_block()
    assert len(every_command) > 20
    missing = []
    for path in every_command:
        group, *rest = path
        # `sandbox build-image [...] | status | stop`: a group's commands may share its line
        lines = [line for line in block.splitlines() if line.startswith(f"skillbank {group}")]
        if not any(re.search(rf"(^skillbank {group}|\|) ?{' '.join(rest)}\b", line) for line in lines):
            missing.append(" ".join(path))
    assert missing == []
