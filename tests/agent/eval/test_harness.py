"""The eval end to end with scripted models: split, rounds, grading, trajectories, skills, report, resume."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent.eval import harness
from agent.eval.harness import EvalConfig, run_eval, summary_of
from agent.eval.split import EvalError
from agent.tasks.model import load_tasks
from sandbox.errors import InterpreterNotFound
from skills_store.errors import SkillStoreError
from skills_store.trajectories.store import SQLiteTrajectoryStore
from tests.agent.eval.conftest import PYTHON


def config(tasks: Path, out: Path, model: str = "scripted:gold", **extra: object) -> EvalConfig:
    fields: dict[str, object] = {"candidates": 1, "embedder": "hash", "test_python": PYTHON, "timeout_s": 120}
    return EvalConfig(tasks=tasks, out=out, model=model, **(fields | extra))  # type: ignore[arg-type]


def test_gold_answers_resolve_every_held_out_task_and_training_teaches_skills(small_tasks: Path, tmp_path: Path):
    out = tmp_path / "eval"
    summary = run_eval(config(small_tasks, out, "scripted:gold"), os.environ)
    split = json.loads((out / "split.json").read_text())
    assert len(split["train"]) == 2
    assert len(split["heldout"]) == 2
    assert not set(split["train"]) & set(split["heldout"])
    rnd = summary["rounds"][0]
    assert rnd["train"]["pass_rate"] == 1.0
    for cond in ("skills", "no_skills"):
        assert rnd["heldout"][cond]["resolved"] == 2
        assert rnd["heldout"][cond]["ci95"][0] > 0.3
    assert rnd["paired"]["both"] == 2
    assert rnd["skills_in_bank"] >= 1
    assert summary["harness_check"] is True
    assert json.loads((out / "results.json").read_text()) == summary
    assert summary_of(config(small_tasks, out, "scripted:gold")) == summary
    page = (out / "report.html").read_text()
    assert "Harness check" in page
    assert "<svg" in page
    with SQLiteTrajectoryStore(out / "home" / "trajectories.db") as store:
        trajectories = store.list(limit=100)
    # Only training attempts become trajectories: held-out tasks never teach.
    statements = {tf.task.task_id: tf.task.problem_statement[:2000] for tf in load_tasks(small_tasks)}
    assert sorted(t.task for t in trajectories) == sorted(statements[t] for t in split["train"])  # type: ignore[misc]
    assert {t.outcome for t in trajectories} == {"success"}


def test_answers_without_a_patch_fail_every_task_but_stay_valid(small_tasks: Path, tmp_path: Path) -> None:
    summary = run_eval(config(small_tasks, tmp_path / "eval", "scripted:wrong"), os.environ)
    stats = summary["rounds"][0]["heldout"]["no_skills"]
    assert (stats["resolved"], stats["valid"], stats["invalid"], stats["pass_rate"]) == (0, 2, 0, 0.0)
    attempts = [json.loads(line) for line in (tmp_path / "eval" / "attempts.jsonl").read_text().splitlines()]
    assert {a["status"] for a in attempts} == {"no_patch"}


def test_a_rerun_resumes_without_redoing_finished_attempts(small_tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    small = {"max_train": 1, "max_heldout": 1}
    run_eval(config(small_tasks, out, "scripted:mixed", rounds=1, **small), os.environ)
    log = out / "attempts.jsonl"
    first = log.read_text()
    log.write_text(first + '{"round": 1, "phase": "held')  # an attempt cut short by a crash
    summary = run_eval(config(small_tasks, out, "scripted:mixed", rounds=2, **small), os.environ)
    lines = log.read_text().splitlines()
    assert log.read_text().startswith(first)
    assert len(lines) == len(first.splitlines()) + 3  # the torn line is cut off; round 2 only
    assert len(summary["rounds"]) == 2


def test_a_rerun_with_fewer_attempts_or_tasks_reports_only_those_it_was_asked_for(
    small_tasks: Path, tmp_path: Path
) -> None:
    out = tmp_path / "eval"
    run_eval(config(small_tasks, out, "scripted:gold", attempts=2, train_attempts=2), os.environ)
    # the same --out, asked for less: the report describes 1 held-out task, 1 attempt, 1 training task and attempt,
    # so its counts must be of those (they were of everything the log held: 4 held-out attempts per condition)
    summary = run_eval(config(small_tasks, out, "scripted:gold", max_train=1, max_heldout=1), os.environ)
    assert summary["heldout_tasks"] == 1
    rnd = summary["rounds"][0]
    for cond in ("skills", "no_skills"):
        assert (rnd["heldout"][cond]["attempts"], rnd["heldout"][cond]["tasks"]) == (1, 1)
    assert rnd["train"]["attempts"] == 1
    assert rnd["paired"]["pairs"] == 1
    assert summary_of(config(small_tasks, out, "scripted:gold", max_train=1, max_heldout=1)) == summary
    assert len((out / "attempts.jsonl").read_text().splitlines()) == 2 * 2 + 2 * 2 * 2  # nothing was dropped


def test_resuming_with_another_model_or_task_set_is_refused(small_tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    run_eval(config(small_tasks, out, "scripted:wrong"), os.environ)
    with pytest.raises(EvalError, match="other model"):
        run_eval(config(small_tasks, out, "scripted:gold"), os.environ)
    victim = load_tasks(small_tasks)[0].path
    victim.rename(small_tasks.parent / "elsewhere")
    with pytest.raises(EvalError, match="different task set"):
        run_eval(config(small_tasks, out, "scripted:wrong"), os.environ)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"model": "scripted:glod"}, "unknown scripted model"),
        ({"model": "openai:gpt-4o"}, "OPENAI_API_KEY is not set"),
        ({"embedder": "minlm"}, "unknown embedder 'minlm'"),
        ({"embedder": "hash:4"}, "bad embedder 'hash:4'"),
        ({"test_python": "/nonexistent/python"}, "does not exist"),
    ],
)
def test_a_refused_run_writes_nothing_so_the_corrected_run_is_not_refused(
    small_tasks: Path, tmp_path: Path, bad: dict[str, str], message: str
) -> None:
    out = tmp_path / "eval"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    fields: dict[str, object] = {"max_train": 1, "max_heldout": 1}
    with pytest.raises(SkillStoreError, match=message):
        run_eval(config(small_tasks, out, **{"model": "scripted:gold", **fields, **bad}), env)  # type: ignore[arg-type]
    assert not out.exists()
    summary = run_eval(config(small_tasks, out, "scripted:gold", **fields), env)
    assert summary["rounds"][0]["heldout"]["skills"]["resolved"] == 1


def test_an_attempt_that_fails_for_a_setup_reason_is_not_logged_and_a_rerun_redoes_it(
    small_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "eval"
    real = harness._oneshot_solver
    calls = {"n": 0}

    def failing_second_time(*args: Any) -> Any:
        solver = real(*args)
        solve = solver.solve

        def solve_or_lose_the_interpreter(ctx: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 2:
                raise InterpreterNotFound("the configured test python '/gone/python' does not exist")
            return solve(ctx)

        solver.solve = solve_or_lose_the_interpreter  # type: ignore[method-assign]
        return solver

    monkeypatch.setattr(harness, "_oneshot_solver", failing_second_time)
    with pytest.raises(EvalError, match=r"InterpreterNotFound.*was not logged"):
        run_eval(config(small_tasks, out, "scripted:gold", max_train=1, max_heldout=1), os.environ)
    assert len((out / "attempts.jsonl").read_text().splitlines()) == 1  # the training attempt before it
    monkeypatch.setattr(harness, "_oneshot_solver", real)
    summary = run_eval(config(small_tasks, out, "scripted:gold", max_train=1, max_heldout=1), os.environ)
    heldout = summary["rounds"][0]["heldout"]
    assert heldout["skills"]["resolved"] == heldout["no_skills"]["resolved"] == 1


def test_setup_failures_an_older_run_logged_as_attempts_are_redone(small_tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    cfg = config(small_tasks, out, "scripted:gold", max_train=1, max_heldout=1)
    run_eval(cfg, os.environ)
    log = out / "attempts.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    missing = "InterpreterNotFound: the configured test python '/nonexistent/python' does not exist"
    for line in lines:  # as the harness logged a missing --python before it checked it
        line.update(status="solver_error", valid=False, resolved=False, patch="", error=missing)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    summary = run_eval(cfg, os.environ)
    assert summary["rounds"][0]["heldout"]["skills"]["resolved"] == 1
    assert len(log.read_text().splitlines()) == 2 * len(lines)


ONESHOT_SOLVER = harness._oneshot_solver


def _solver_failing_with(monkeypatch: pytest.MonkeyPatch, error: str, times: int) -> dict[str, int]:
    """The one-shot solver, whose first `times` attempts end with the model's API failing with `error`."""
    from agent.eval.solver import SolveResult

    calls = {"n": 0}

    def wrapped(*args: Any) -> Any:
        solver = ONESHOT_SOLVER(*args)
        solve = solver.solve

        def solve_or_fail(ctx: Any) -> Any:
            calls["n"] += 1
            return SolveResult(error=error) if calls["n"] <= times else solve(ctx)

        solver.solve = solve_or_fail  # type: ignore[method-assign]
        return solver

    monkeypatch.setattr(harness, "_oneshot_solver", wrapped)
    return calls


def test_an_api_outage_is_an_invalid_attempt_that_a_rerun_redoes(
    small_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "eval"
    cfg = config(small_tasks, out, "scripted:gold", max_train=1, max_heldout=1)
    _solver_failing_with(monkeypatch, "ModelServerError: status_code: 500, model_name: x, body: boom", times=99)
    summary = run_eval(cfg, os.environ)
    heldout = summary["rounds"][0]["heldout"]
    assert heldout["skills"]["resolved"] == heldout["no_skills"]["resolved"] == 0
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert {(r["status"], r["valid"]) for r in records} == {("solver_error", False)}
    _solver_failing_with(monkeypatch, "unused", times=0)  # the API answers again: every attempt is redone
    summary = run_eval(cfg, os.environ)
    heldout = summary["rounds"][0]["heldout"]
    assert heldout["skills"]["resolved"] == heldout["no_skills"]["resolved"] == 1


def test_an_attempt_whose_skillbank_server_died_is_invalid_and_a_rerun_redoes_it(
    small_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "eval"
    cfg = config(small_tasks, out, "scripted:gold", max_train=1, max_heldout=1)
    _solver_failing_with(monkeypatch, "ServerLost: the skillbank server stopped answering (Connection closed)", 99)
    run_eval(cfg, os.environ)
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert {(r["status"], r["valid"]) for r in records} == {("solver_error", False)}
    _solver_failing_with(monkeypatch, "unused", times=0)  # the server runs again: every attempt is redone
    heldout = run_eval(cfg, os.environ)["rounds"][0]["heldout"]
    assert heldout["skills"]["resolved"] == heldout["no_skills"]["resolved"] == 1


def test_a_key_the_api_refuses_stops_the_eval_and_logs_nothing(
    small_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "eval"
    cfg = config(small_tasks, out, "scripted:gold", max_train=1, max_heldout=1)
    _solver_failing_with(monkeypatch, "ModelAuthenticationError: status_code: 401, body: bad key", times=99)
    with pytest.raises(EvalError, match=r"refused the configuration.*check the model's name and its key"):
        run_eval(cfg, os.environ)
    assert not (out / "attempts.jsonl").exists() or not (out / "attempts.jsonl").read_text().strip()
