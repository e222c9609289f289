"""`skillbank eval` from the command line with a scripted model: a labelled harness check, files in --out."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from mcp_server.cli.eval import eval_
from tests.agent.eval.conftest import PYTHON

runner = CliRunner()
app = typer.Typer()
app.command()(eval_)


def test_eval_prints_per_round_rates_and_says_it_is_a_harness_check(
    small_tasks: Path, tmp_path: Path, skillbank_home: Path
) -> None:
    out = tmp_path / "eval"
    args = ["--tasks", str(small_tasks), "--model", "scripted:gold", "--out", str(out), "--candidates", "1",
            "--embedder", "hash", "--python", PYTHON, "--max-train", "1", "--max-heldout", "1"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Harness check" in result.stdout
    assert "round 1: held-out pass rate with skills 1.00" in result.stdout
    assert json.loads((out / "results.json").read_text())["harness_check"] is True


def test_an_unknown_scripted_model_and_a_missing_task_dir_are_clear_errors(
    small_tasks: Path, tmp_path: Path, skillbank_home: Path
) -> None:
    missing = runner.invoke(app, ["--tasks", str(tmp_path / "none"), "--model", "scripted:gold", "--out", "o"])
    assert missing.exit_code == 2
    assert "no such directory of tasks" in missing.output
    out = str(tmp_path / "o")
    unknown = runner.invoke(app, ["--tasks", str(small_tasks), "--model", "scripted:oracle", "--out", out])
    assert unknown.exit_code == 2
    assert "unknown scripted model 'scripted:oracle'" in unknown.output


def test_a_missing_test_python_is_a_clear_error_before_anything_is_written(
    small_tasks: Path, tmp_path: Path, skillbank_home: Path
) -> None:
    out = tmp_path / "eval"
    args = ["--tasks", str(small_tasks), "--model", "scripted:gold", "--out", str(out), "--embedder", "hash"]
    result = runner.invoke(app, [*args, "--python", "/nonexistent/python"])
    assert result.exit_code == 2
    assert "the test python --python=/nonexistent/python does not exist" in result.output
    assert "run_tests" not in result.output  # the MCP tool's advice does not fit the CLI
    assert not out.exists()


def test_an_unknown_embedder_is_refused_and_the_same_out_then_takes_the_corrected_command(
    small_tasks: Path, tmp_path: Path, skillbank_home: Path
) -> None:
    out = tmp_path / "eval"
    args = ["--tasks", str(small_tasks), "--model", "scripted:gold", "--out", str(out), "--candidates", "1",
            "--python", PYTHON, "--max-train", "1", "--max-heldout", "1"]  # fmt: skip
    refused = runner.invoke(app, [*args, "--embedder", "minlm"])
    assert refused.exit_code == 2
    assert "unknown embedder 'minlm'" in refused.output
    assert not out.exists()
    assert runner.invoke(app, [*args, "--embedder", "hash"]).exit_code == 0
