"""A bad `SKILLBANK_*` variable stops a command with one line naming the variable and what it needs (exit 2),
never a traceback, whichever way it is bad: a value of the wrong type, or a JSON setting whose text is not JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli import build_app

runner = CliRunner()


@pytest.mark.parametrize("command", [["trajectories", "list"], ["serve"], ["skills", "list"]])
@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "SKILLBANK_REDACT_PATTERNS",
            "ACME-[0-9]+",
            """SKILLBANK_REDACT_PATTERNS is not JSON (Expecting value: line 1 column 1 (char 0)); it needs a JSON """
            """list, e.g. '["ACME-[0-9]+"]'""",
        ),
        ("SKILLBANK_REWARD_WEIGHTS", '{"syntax": 0.2,}', "SKILLBANK_REWARD_WEIGHTS is not JSON (Expecting property"),
        ("SKILLBANK_REDACT_PATTERNS", '"ACME"', "SKILLBANK_REDACT_PATTERNS: Input should be a valid list"),
    ],
)
def test_a_setting_that_is_not_what_it_needs_exits_2_naming_the_variable(
    skillbank_home: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], variable: str, value: str, message: str
) -> None:
    monkeypatch.setenv(variable, value)
    result = runner.invoke(build_app(), command)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    assert result.output.startswith("skillbank: error: invalid settings: ")
    assert message in result.output
    assert list(skillbank_home.iterdir()) == []  # nothing was created
