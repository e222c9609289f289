"""The bundled suite: at least 20 valid tasks over at least 3 projects, and a manifest of real PyPI releases."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.tasks.grading import grade_patch
from agent.tasks.model import load_tasks
from agent.tasks.pypi import read_manifest
from agent.tasks.statements import leaks_fix
from tests.agent.tasks.conftest import PYTHON

SUITE = Path(__file__).parents[3] / "agent" / "tasks" / "suite"


def test_the_suite_has_twenty_valid_tasks_over_three_projects_or_more() -> None:
    tasks = load_tasks(SUITE / "tasks")
    assert len(tasks) >= 20
    assert len({tf.task.source for tf in tasks}) >= 3
    assert len({tf.task.bug_class for tf in tasks}) >= 6
    for tf in tasks:
        assert not leaks_fix(tf.task.problem_statement, tf.gold_patch), tf.task.task_id


def test_one_gold_patch_per_project_resolves_its_task() -> None:
    first: dict[str, object] = {}
    for tf in load_tasks(SUITE / "tasks"):
        first.setdefault(tf.task.source, tf)
    for tf in first.values():
        assert grade_patch(tf, tf.gold_patch, test_python=PYTHON).resolved  # type: ignore[arg-type, attr-defined]


@pytest.mark.slow
def test_every_gold_patch_of_the_suite_resolves_its_task() -> None:
    for tf in load_tasks(SUITE / "tasks"):
        assert grade_patch(tf, tf.gold_patch, test_python=PYTHON).resolved, tf.task.task_id


def test_the_pypi_manifest_lists_pinned_releases() -> None:
    specs = read_manifest(SUITE / "pypi.txt")
    assert "more-itertools==10.2.0" in specs
    assert all("==" in spec for spec in specs)
