"""Agentic mode: the bundled agent solves through a real skillbank server (stdio), scripted to apply the fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent.eval.harness import EvalConfig, run_eval
from skills_store.trajectories.store import SQLiteTrajectoryStore
from tests.agent.eval.conftest import PYTHON


@pytest.mark.e2e
def test_the_agent_resolves_tasks_and_its_server_records_what_training_teaches(small_tasks: Path, tmp_path: Path):
    out = tmp_path / "eval"
    config = EvalConfig(tasks=small_tasks, out=out, model="scripted:gold", mode="agentic", embedder="hash",
                        test_python=PYTHON, max_train=1, max_heldout=1, timeout_s=120)  # fmt: skip
    summary = run_eval(config, os.environ)
    rnd = summary["rounds"][0]
    assert rnd["train"]["resolved"] == 1
    assert rnd["heldout"]["skills"]["resolved"] == rnd["heldout"]["no_skills"]["resolved"] == 1
    assert rnd["skills_in_bank"] >= 1
    with SQLiteTrajectoryStore(out / "home" / "trajectories.db") as store:
        trajectories = store.list(limit=10)
        assert len(trajectories) == 3
        pending = store.pending_for("heuristic")
    assert pending == []  # the training one was distilled, the held-out ones retired


@pytest.mark.e2e
def test_a_relative_out_keeps_the_eval_data_out_of_the_task_copies(
    small_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server runs in each task's copy: `--out ev` once recorded into <copy>/ev/home, so the eval found no
    # trajectory and the attempt's patch held the data dir's files.
    monkeypatch.chdir(tmp_path)
    config = EvalConfig(tasks=small_tasks, out=Path("ev"), model="scripted:gold", mode="agentic", embedder="hash",
                        test_python=os.path.relpath(PYTHON), max_train=1, max_heldout=1, timeout_s=120)  # fmt: skip
    summary = run_eval(config, os.environ)
    assert summary["rounds"][0]["train"]["resolved"] == 1
    with SQLiteTrajectoryStore(tmp_path / "ev" / "home" / "trajectories.db") as store:
        assert len(store.list(limit=10)) == 3
    patches = [json.loads(line)["patch"] for line in (tmp_path / "ev" / "attempts.jsonl").read_text().splitlines()]
    assert patches
    assert not any("ev/home" in patch for patch in patches)
