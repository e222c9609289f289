"""Synthesis on a real tiny project: every task is verified, its gold patch fixes it, and bad projects are refused."""

from __future__ import annotations

import shutil
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


def test_a_rerun_into_an_out_holding_one_of_its_tasks_writes_the_others_and_counts_that_one(
    synthesized, tmp_path: Path
) -> None:
    # It once stopped with "exists already" after writing the other tasks, as if it had been refused.
    repo, out, _ = synthesized
    held = sorted(p for p in out.iterdir() if p.is_dir())[0]
    again = tmp_path / "again"
    shutil.copytree(held, again / held.name)
    before = {p.relative_to(again): p.read_bytes() for p in (again / held.name).rglob("*") if p.is_file()}
    report = synthesize(repo, again, SynthConfig(n=3, seed=1, workers=1, test_python=PYTHON), project="calc",
                        source="repo:calc")  # fmt: skip
    assert report.existing == [again / held.name]
    assert len(report.tasks) == 2
    assert report.made == 3
    assert report.verdicts["already_in_out"] == 1
    assert sorted(p.name for p in again.iterdir()) == sorted(p.name for p in out.iterdir() if p.is_dir())
    assert {p.relative_to(again): p.read_bytes() for p in (again / held.name).rglob("*") if p.is_file()} == before
    assert "1 already in the output dir" in report.summary()


def test_a_folder_of_that_name_holding_another_task_is_left_alone_and_reported(synthesized, tmp_path: Path) -> None:
    repo, out, _ = synthesized
    again = tmp_path / "again"
    shutil.copytree(out, again)
    other = sorted(p for p in again.iterdir() if p.is_dir())[0]
    (other / "gold.patch").write_text("not this task's fix\n")
    report = synthesize(repo, again, SynthConfig(n=3, seed=1, workers=1, test_python=PYTHON), project="calc",
                        source="repo:calc")  # fmt: skip
    assert report.name_taken == [other]
    assert len(report.existing) == 2
    assert (other / "gold.patch").read_text() == "not this task's fix\n"
    assert "a different task of that name is in the output dir" in report.summary()
    assert {p.name for p in report.tasks}.isdisjoint({other.name})
