"""The task-folder contract: what is written reads back, and every kind of broken folder is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.tasks.model import Task, TaskError, check_gold_patch, load_tasks, read_task, write_task

GOLD = """\
--- a/calc/stats.py
+++ b/calc/stats.py
@@ -1,2 +1,2 @@
 def mean(values):
-    if values:
+    if not values:
"""


def make_task(**extra: object) -> Task:
    fields: dict[str, object] = {
        "task_id": "calc-1",
        "problem_statement": "mean([]) does not raise",
        "fail_to_pass": ["tests/test_stats.py::test_mean_empty"],
        "pass_to_pass": ["tests/test_stats.py::test_mean"],
        "bug_class": "negated_condition",
        "source": "repo:calc",
    }
    return Task.model_validate(fields | extra)


def test_a_written_task_reads_back_with_its_fields(tmp_path: Path, calc_repo: Path) -> None:
    folder = write_task(tmp_path / "out", make_task(), calc_repo, {"calc/stats.py": "broken = True\n"}, GOLD)
    tf = read_task(folder)
    assert tf.task == make_task()
    assert tf.gold_patch == GOLD
    assert (tf.repo / "calc" / "stats.py").read_text() == "broken = True\n"
    assert (tf.repo / "tests" / "test_stats.py").is_file()
    assert tf.graded_tests == ["tests/test_stats.py::test_mean_empty", "tests/test_stats.py::test_mean"]
    assert set(json.loads((folder / "task.json").read_text())) >= {
        "task_id", "problem_statement", "fail_to_pass", "pass_to_pass", "bug_class", "source"
    }  # fmt: skip


def test_writing_over_an_existing_task_is_refused(tmp_path: Path, calc_repo: Path) -> None:
    write_task(tmp_path, make_task(), calc_repo, {}, GOLD)
    with pytest.raises(TaskError, match="exists already"):
        write_task(tmp_path, make_task(), calc_repo, {}, GOLD)


def test_a_gold_patch_touching_a_test_file_is_refused() -> None:
    patch = GOLD.replace("calc/stats.py", "tests/test_stats.py")
    with pytest.raises(ValueError, match="touches test file"):
        check_gold_patch(patch)


def test_a_gold_patch_without_prefixes_is_refused() -> None:
    with pytest.raises(ValueError, match="no a/ or b/ prefix"):
        check_gold_patch(GOLD.replace("a/calc", "calc").replace("b/calc", "calc"))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda f: (f / "task.json").unlink(), "no task.json"),
        (lambda f: (f / "task.json").write_text("{not json"), "not valid JSON"),
        (lambda f: (f / "task.json").write_text(json.dumps({"task_id": "x"})), "problem_statement: Field required"),
        (lambda f: (f / "gold.patch").unlink(), "no gold.patch"),
        (lambda f: (f / "gold.patch").write_text(""), "the gold patch is empty"),
        (lambda f: (f / "repo" / "tests" / "test_stats.py").unlink(), "tests name file"),
        (lambda f: (f / "repo" / "calc" / "stats.py").unlink(), "which repo/ does not contain"),
    ],
)
def test_a_broken_task_folder_is_refused_naming_the_fault(tmp_path: Path, calc_repo: Path, damage, message) -> None:
    folder = write_task(tmp_path, make_task(), calc_repo, {}, GOLD)
    damage(folder)
    with pytest.raises(TaskError, match=message) as caught:
        read_task(folder)
    assert str(folder) in str(caught.value)


def test_node_ids_outside_the_repo_are_refused() -> None:
    with pytest.raises(ValueError, match="relative to the repo root"):
        make_task(fail_to_pass=["../elsewhere/test_x.py::test_a"])


def test_loading_a_directory_without_tasks_or_with_duplicate_ids_fails(tmp_path: Path, calc_repo: Path) -> None:
    with pytest.raises(TaskError, match="no task folders"):
        load_tasks(tmp_path)
    write_task(tmp_path / "a", make_task(), calc_repo, {}, GOLD)
    write_task(tmp_path / "b", make_task(), calc_repo, {}, GOLD)
    (tmp_path / "a" / "calc-1").rename(tmp_path / "one")
    (tmp_path / "b" / "calc-1").rename(tmp_path / "two")
    with pytest.raises(TaskError, match="appears twice"):
        load_tasks(tmp_path)
