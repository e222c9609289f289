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


def test_a_run_whose_skillbank_server_died_is_an_invalid_attempt_whatever_it_changed(
    small_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent.run
    from agent.run import AgentRunResult

    async def lost(*args: object, **kwargs: object) -> AgentRunResult:
        return AgentRunResult(outcome="failure", reward=0.0, tests=None, tokens=0, input_tokens=0, output_tokens=0,
                              requests=2, tool_calls=1, wall_s=0.1, trajectory_id=None,
                              final_diff="--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n",
                              error="ServerLost: the skillbank server stopped answering (closed)")  # fmt: skip

    monkeypatch.setattr(agent.run, "solve", lost)
    out = tmp_path / "eval"
    config = EvalConfig(tasks=small_tasks, out=out, model="scripted:gold", mode="agentic", embedder="hash",
                        test_python=PYTHON, max_train=1, max_heldout=1, timeout_s=120)  # fmt: skip
    run_eval(config, os.environ)
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert records
    assert {(r["status"], r["valid"], r["patch"]) for r in records} == {("solver_error", False, "")}
