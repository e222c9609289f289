"""`skillbank tasks synth | check` end to end on a tiny project (no skill bank: operators weighted equally)."""

from __future__ import annotations

import importlib
import inspect
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli import tasks as tasks_cli
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


@pytest.mark.parametrize("spec", ["six", "six==", "six=1.16.0"])
def test_a_malformed_pypi_spec_is_bad_input_and_creates_nothing(
    spec: str, tmp_path: Path, skillbank_home: Path
) -> None:
    result = runner.invoke(app, ["synth", "--pypi", spec, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2  # 1 is a source that could not be used, not a typo
    assert "is not NAME==VERSION" in result.output
    assert not (tmp_path / "out").exists()
    assert list(skillbank_home.iterdir()) == []


def test_a_missing_python_is_refused_in_the_cli_s_words_before_out_is_created(
    calc_repo: Path, tmp_path: Path, skillbank_home: Path
) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["synth", "--repo", str(calc_repo), "--out", str(out), "--python", "/nonexistent/py"])
    assert result.exit_code == 2
    assert "the test python --python=/nonexistent/py does not exist" in result.output
    assert "run_tests" not in result.output
    assert not out.exists()


def test_an_out_that_is_a_file_is_refused(calc_repo: Path, tmp_path: Path, skillbank_home: Path) -> None:
    (tmp_path / "out").write_text("x")
    result = runner.invoke(app, ["synth", "--repo", str(calc_repo), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "is not a directory" in result.output


def test_the_workers_default_is_the_two_the_readme_shows_whatever_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 16)  # it was os.cpu_count(), read when the module loads
    module = importlib.reload(tasks_cli)
    assert inspect.signature(module.synth).parameters["workers"].default == 2


def test_a_rerun_of_the_same_synth_writes_nothing_and_exits_0(
    calc_repo: Path, tmp_path: Path, skillbank_home: Path
) -> None:
    out = tmp_path / "tasks"
    args = ["synth", "--repo", str(calc_repo), "--out", str(out), "--n", "2", "--workers", "1", "--python", PYTHON]
    assert runner.invoke(app, args).exit_code == 0
    before = sorted(p.name for p in out.iterdir())
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "2 already in the output dir (identical)" in again.stdout
    assert "wrote 0 task folder(s)" in again.stdout
    assert sorted(p.name for p in out.iterdir()) == before


def test_check_gold_says_why_a_task_is_not_resolved(calc_repo: Path, tmp_path: Path, skillbank_home: Path) -> None:
    out = tmp_path / "tasks"
    args = ["synth", "--repo", str(calc_repo), "--out", str(out), "--n", "1", "--workers", "1", "--python", PYTHON]
    assert runner.invoke(app, args).exit_code == 0
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    ghost = folder.parent / "ghost"
    import shutil

    shutil.copytree(folder, ghost)
    task = json.loads((ghost / "task.json").read_text())
    real = task["fail_to_pass"][0]
    task["task_id"], task["fail_to_pass"] = "ghost", [real.split("::")[0] + "::test_no_such_test"]
    (ghost / "task.json").write_text(json.dumps(task))
    gold = (folder / "gold.patch").read_text()
    (folder / "gold.patch").write_text(gold.replace("\n-", "\n-#not there ", 1))
    checked = runner.invoke(app, ["check", str(out), "--gold", "--python", PYTHON])
    assert checked.exit_code == 1, checked.output
    lines = checked.stdout.splitlines()
    refused = lines[lines.index(next(line for line in lines if "gold patch patch_refused" in line)) + 1]
    assert "#not there" in refused  # apply_patch's refusal, naming the line it could not find
    assert "the run ended error: pytest exit 4: no test matches " + task["fail_to_pass"][0] in checked.stdout
