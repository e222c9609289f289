"""`skillbank tasks synth | check` end to end on a tiny project (no skill bank: operators weighted equally)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mcp_server.cli.tasks import app
from tests.agent.tasks.conftest import PYTHON

runner = CliRunner()


def test_synth_writes_tasks_that_check_passes_with_their_gold_patches(
    calc_repo: Path, tmp_path: Path, skillbank_home: Path
) -> None:
    out = tmp_path / "tasks"
    args = ["synth", "--repo", str(calc_repo), "--out", str(out), "--n", "2", "--workers", "2", "--python", PYTHON]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert len(report["tasks"]) == 2
    assert report["baseline"]["passing"] == 7
    checked = runner.invoke(app, ["check", str(out), "--gold", "--python", PYTHON])
    assert checked.exit_code == 0, checked.output
    assert "2 task(s) checked, 0 not resolved" in checked.stdout


def test_synth_needs_exactly_one_source(tmp_path: Path, skillbank_home: Path) -> None:
    result = runner.invoke(app, ["synth", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "exactly one of --repo DIR or --pypi" in result.output


def test_check_names_a_broken_task_folder(tmp_path: Path, skillbank_home: Path) -> None:
    (tmp_path / "t1").mkdir()
    (tmp_path / "t1" / "task.json").write_text("{}")
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert "task_id: Field required" in result.output
