"""Synthesis on a real tiny project: every task is verified, its gold patch fixes it, and bad projects are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.tasks.errors import SynthError
from agent.tasks.grading import grade_patch
from agent.tasks.model import load_tasks
from agent.tasks.statements import leaks_fix
from agent.tasks.synth import SynthConfig, synthesize
from tests.agent.tasks.conftest import FILES, PYTHON, write_project


def test_synthesis_writes_the_requested_number_of_distinct_tasks(synthesized) -> None:
    _, out, report = synthesized
    tasks = load_tasks(out)
    assert len(tasks) == 3 == len(report.tasks)
    assert report.verdicts["killed"] == 3
    assert len({frozenset(t.task.fail_to_pass) for t in tasks}) == 3
    for tf in tasks:
        assert tf.task.source == "repo:calc"
        assert tf.task.bug_class == tf.task.mutation.operator  # type: ignore[union-attr]
        assert not set(tf.task.fail_to_pass) & set(tf.task.pass_to_pass)
        assert len(tf.task.fail_to_pass) + len(tf.task.pass_to_pass) == 7


def test_each_gold_patch_resolves_its_task_and_the_broken_tree_does_not(synthesized) -> None:
    _, out, _ = synthesized
    for tf in load_tasks(out):
        fixed = grade_patch(tf, tf.gold_patch, test_python=PYTHON)
        assert fixed.resolved, tf.task.task_id
        broken = grade_patch(tf, None, test_python=PYTHON)
        assert broken.valid
        assert not broken.resolved
        assert broken.fail_to_pass_passed == 0
        assert broken.pass_to_pass_passed == broken.pass_to_pass_total


def test_problem_statements_name_the_failing_tests_and_never_contain_the_fix(synthesized) -> None:
    _, out, _ = synthesized
    for tf in load_tasks(out):
        assert tf.task.fail_to_pass[0] in tf.task.problem_statement
        assert not leaks_fix(tf.task.problem_statement, tf.gold_patch)


def test_the_same_seed_gives_the_same_tasks(synthesized, tmp_path: Path) -> None:
    repo, out, _ = synthesized
    again = synthesize(
        repo, tmp_path / "again", SynthConfig(n=3, seed=1, workers=1, test_python=PYTHON), project="calc", source="x"
    )
    assert sorted(p.name for p in again.tasks) == sorted(p.name for p in out.iterdir() if p.is_dir())


def test_a_project_whose_tests_do_not_pass_anywhere_is_refused(tmp_path: Path) -> None:
    files = dict(FILES)
    files["tests/test_stats.py"] = "def test_broken():\n    assert False\n"
    repo = write_project(tmp_path / "p", files)
    with pytest.raises(SynthError, match=r"no test .* passes"):
        synthesize(repo, tmp_path / "out", SynthConfig(n=1, test_python=PYTHON), project="p", source="p")


def test_writing_tasks_inside_the_project_is_refused(calc_repo: Path) -> None:
    with pytest.raises(SynthError, match="inside the project"):
        synthesize(calc_repo, calc_repo / "tasks", SynthConfig(n=1, test_python=PYTHON), project="p", source="p")


def test_synthesis_never_writes_into_the_project(synthesized) -> None:
    repo, _, _ = synthesized
    written = [p for p in repo.rglob("*") if p.name in ("__pycache__", ".pytest_cache") or p.suffix == ".pyc"]
    assert written == []
