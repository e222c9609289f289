"""The line `tasks check --gold` shows under a task its gold patch does not resolve (`Grade.detail`)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agent.tasks.grading import grade_result
from sandbox.testing.models import Reward, TestCase, TestRunResult


def _run(status: str, tests: dict[str, str], warnings: list[str] = [], tail: str = "") -> TestRunResult:  # noqa: B006
    return TestRunResult(
        status=status,  # type: ignore[arg-type]
        duration_s=1.0,
        exit_code=1,
        backend="local",
        command="pytest",
        tests=[TestCase(id=test_id, outcome=outcome) for test_id, outcome in tests.items()],  # type: ignore[arg-type]
        reward=Reward(value=0.0, components={}),
        output_tail=tail,
        warnings=warnings,
    )


def _task(fail_to_pass: list[str], pass_to_pass: list[str]) -> Any:
    return SimpleNamespace(task=SimpleNamespace(fail_to_pass=fail_to_pass, pass_to_pass=pass_to_pass))


def test_a_finished_run_names_the_listed_ids_it_did_not_report() -> None:
    listed = [f"t.py::gone_{i}" for i in range(5)]
    grade = grade_result(_run("passed", {"t.py::kept": "passed"}), _task(listed, ["t.py::kept"]))
    assert not grade.resolved
    assert grade.detail == "not in the run's results: t.py::gone_0, t.py::gone_1, t.py::gone_2 and 2 more"


def test_a_run_that_ended_otherwise_gives_its_first_warning_or_last_output_line() -> None:
    warned = grade_result(_run("error", {}, ["no test matches t.py::x", "second"]), _task(["t.py::x"], []))
    assert warned.detail == "the run ended error: no test matches t.py::x"
    timed_out = grade_result(_run("timeout", {}, tail="collected 3 items\n\n  hanging in t.py:4  \n"), _task(["a"], []))
    assert timed_out.detail == "the run ended timeout: hanging in t.py:4"


def test_a_resolved_task_has_no_detail() -> None:
    grade = grade_result(_run("passed", {"t.py::a": "passed"}), _task(["t.py::a"], []))
    assert grade.resolved
    assert grade.detail is None
