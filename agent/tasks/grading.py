"""Grading a task's tree SWE-bench style, through the sandbox's test runner.

Resolved: every fail_to_pass and pass_to_pass test passes. A run that timed out, crashed before reporting, or
reported none of the graded tests is *invalid*: it says nothing about the patch, so it is counted apart rather
than as a failure.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from agent.tasks.errors import TestPythonError
from agent.tasks.files import copy_repo
from agent.tasks.model import TaskFolder
from sandbox.errors import InterpreterNotFound, SandboxError
from sandbox.exec.interpreter import find_interpreter
from sandbox.patch import apply_patch
from sandbox.testing.config import RunnerConfig
from sandbox.testing.grading import grade
from sandbox.testing.models import TestRunResult
from sandbox.testing.runner import run_tests


class Grade(BaseModel):
    resolved: bool
    valid: bool
    """False when the run timed out or gave no evidence about the graded tests."""
    status: str
    fail_to_pass_passed: int
    fail_to_pass_total: int
    pass_to_pass_passed: int
    pass_to_pass_total: int
    duration_s: float
    patch_error: str | None = None
    """Why the patch could not be applied (then nothing ran and the grade is a valid failure)."""
    detail: str | None = None
    """Why graded tests did not pass, in a line (what `tasks check --gold` shows): the listed ids a finished run did
    not report, or for a run that ended in neither `passed` nor `failed`, its first warning or last output line."""


def check_test_python(test_python: str | None, given_as: str = "--python") -> None:
    """Refuse a test interpreter that does not exist or does not run, before anything is written or run.

    Every test run would fail the same way, and `eval` would log each attempt as the model's failure (`tasks
    synth` as a project whose tests do not run). `given_as` names where the value came from (`--python`,
    `SKILLBANK_TEST_PYTHON`), so the message says what to change.
    """
    if not test_python:
        return
    found = shutil.which(test_python) if os.sep not in test_python else test_python
    hint = "point it at a Python with pytest installed (e.g. --python .venv/bin/python)"
    if not found or not Path(found).exists():
        raise TestPythonError(f"the test python {given_as}={test_python} does not exist; {hint}")
    with tempfile.TemporaryDirectory(prefix="sb-python-") as empty:  # no .venv there: the interpreter itself is asked
        try:
            find_interpreter(Path(empty), found)
        except InterpreterNotFound:
            raise TestPythonError(f"the test python {given_as}={test_python} does not run; {hint}") from None


def runner_config(test_python: str | None) -> RunnerConfig:
    """Every graded test must be listed in the result, so the cap on listed tests is lifted."""
    return RunnerConfig(test_python=test_python, max_tests=1_000_000)


@contextmanager
def fresh_copy(tf: TaskFolder, parent: Path | None = None) -> Iterator[Path]:
    """A throwaway copy of the task's broken tree (every attempt starts from one)."""
    with tempfile.TemporaryDirectory(prefix=f"sb-{tf.task.task_id[:40]}-", dir=parent) as tmp:
        yield copy_repo(tf.repo, Path(tmp) / "repo")


def grade_result(result: TestRunResult, tf: TaskFolder) -> Grade:
    report = grade(result, tf.task.fail_to_pass, tf.task.pass_to_pass)
    graded = report.fail_to_pass.total + report.pass_to_pass.total
    missing = len(report.fail_to_pass.missing) + len(report.pass_to_pass.missing)
    valid = result.status in ("passed", "failed") and missing < graded
    return Grade(
        resolved=report.resolved and valid,
        valid=valid,
        status=result.status,
        fail_to_pass_passed=len(report.fail_to_pass.passed),
        fail_to_pass_total=report.fail_to_pass.total,
        pass_to_pass_passed=len(report.pass_to_pass.passed),
        pass_to_pass_total=report.pass_to_pass.total,
        duration_s=result.duration_s,
        detail=_detail(result, report.fail_to_pass.missing + report.pass_to_pass.missing),
    )


def _detail(result: TestRunResult, missing: list[str]) -> str | None:
    parts = []
    if missing and result.status in ("passed", "failed"):  # else the run's own reason below says why
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        parts.append(f"not in the run's results: {', '.join(missing[:3])}{more}")
    if result.status not in ("passed", "failed"):
        lines = [line.strip() for line in result.output_tail.splitlines() if line.strip()]
        why = result.warnings[0] if result.warnings else (lines[-1] if lines else "")
        if why:
            parts.append(f"the run ended {result.status}: {' '.join(why.split())[:300]}")
    return "; ".join(parts) or None


def run_graded(workspace: Path, tf: TaskFolder, *, timeout_s: int, test_python: str | None) -> TestRunResult:
    return run_tests(
        workspace, tests=tf.graded_tests, timeout_s=timeout_s, backend="local", config=runner_config(test_python)
    )


def run_gold(tf: TaskFolder, *, timeout_s: int, test_python: str | None) -> TestRunResult:
    """The grader's own run (`run_graded`) on a fresh copy of the task's tree with its gold patch applied: what
    `tasks check --gold` grades. A SandboxError when the gold patch does not apply."""
    with fresh_copy(tf) as ws:
        apply_patch(ws, tf.gold_patch)
        return run_graded(ws, tf, timeout_s=timeout_s, test_python=test_python)


def grade_tree(workspace: Path, tf: TaskFolder, *, timeout_s: int = 300, test_python: str | None = None) -> Grade:
    """Grade `workspace` (a copy of the task's tree, maybe patched) against the task's test lists."""
    return grade_result(run_graded(workspace, tf, timeout_s=timeout_s, test_python=test_python), tf)


def grade_patch(tf: TaskFolder, patch: str | None, *, timeout_s: int = 300, test_python: str | None = None) -> Grade:
    """Apply `patch` (None: none) to a fresh copy of the broken tree and grade it."""
    with fresh_copy(tf) as ws:
        if patch:
            try:
                apply_patch(ws, patch)
            except SandboxError as exc:
                return Grade(
                    resolved=False,
                    valid=True,
                    status="patch_refused",
                    fail_to_pass_passed=0,
                    fail_to_pass_total=len(tf.task.fail_to_pass),
                    pass_to_pass_passed=0,
                    pass_to_pass_total=len(tf.task.pass_to_pass),
                    duration_s=0.0,
                    patch_error=str(exc)[:2000],
                )
        return grade_tree(ws, tf, timeout_s=timeout_s, test_python=test_python)
