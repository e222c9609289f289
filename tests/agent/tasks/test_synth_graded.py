"""Synthesis checks each task the way it is graded (the listed tests, not the whole suite) before writing it.

A test that passes in the whole suite but not as the grader runs it (order- or run-shape-dependent, like six's
`test_lazy`) once went into pass_to_pass, so `tasks check --gold` failed every task synthesized from the project.
The other way round, a test that fails on the broken tree only in the whole suite went into fail_to_pass, where
an agent changing nothing would pass it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agent.tasks.grading import grade_patch
from agent.tasks.model import load_tasks
from agent.tasks.mutate import Mutant
from agent.tasks.synth import SynthConfig, gold_check, synthesize
from agent.tasks.verify import Verdict
from tests.agent.tasks.conftest import FILES, PYTHON, write_project

LAZY = "tests/test_a_lazy.py::test_lazy"
SETUP = "tests/test_a_setup.py::test_setup"
STATS = [
    f"tests/test_stats.py::{name}"
    for name in ("test_mean", "test_mean_empty", "test_clamp_low", "test_clamp_high", "test_clamp_mid", "test_window",
                 "test_window_three")
]  # fmt: skip

# Every test_stats test imports calc.heavy when it runs; test_lazy (first in the whole suite) asserts it was not.
# As the graded id list (fail_to_pass, all in test_stats, first) test_lazy always fails.
LAZY_FILES = {
    **FILES,
    "calc/heavy.py": '"""Imported lazily."""\n',
    "tests/test_a_lazy.py": """\
        import sys


        def test_lazy():
            assert "calc.heavy" not in sys.modules
        """,
    "tests/test_stats.py": "import pytest\n\n\n@pytest.fixture(autouse=True)\n"
    "def _heavy():\n    import calc.heavy\n\n\n" + textwrap.dedent(FILES["tests/test_stats.py"]),
}

# test_mean passes only after test_setup has run: in the whole suite, never as a fail_to_pass test graded first.
SETUP_FILES = {
    **FILES,
    "tests/test_a_setup.py": """\
        import calc


        def test_setup():
            calc.READY = True
        """,
    "tests/test_stats.py": textwrap.dedent(FILES["tests/test_stats.py"]).replace(
        "def test_mean():\n", "def test_mean():\n    import calc\n\n    assert getattr(calc, 'READY', False)\n"
    ),
}


# test_cache (first in the whole suite) keeps what mean gives; test_cached checks it. With mean broken, test_cached
# fails in the whole suite, but as a graded fail_to_pass test it runs first, before anything is kept: it passes.
CACHE = "tests/test_a_cache.py::test_cache"
CACHED = "tests/test_stats.py::test_cached"
LEAK_FILES = {
    **FILES,
    "tests/test_a_cache.py": """\
        import calc
        from calc.stats import mean


        def test_cache():
            calc.CACHE = mean([1, 2, 3])
        """,
    "tests/test_stats.py": textwrap.dedent(FILES["tests/test_stats.py"])
    + '\n\ndef test_cached():\n    import calc\n\n    assert getattr(calc, "CACHE", 2) == 2\n',
}


@pytest.fixture(scope="module")
def lazy_synthesized(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("lazy")
    repo = write_project(base / "lazy-project", LAZY_FILES)
    config = SynthConfig(n=3, seed=1, workers=2, test_python=PYTHON)
    report = synthesize(repo, base / "tasks", config, project="calc", source="repo:calc")
    return repo, base / "tasks", report


def test_an_order_dependent_pass_to_pass_test_is_dropped_so_every_gold_patch_resolves(lazy_synthesized) -> None:
    _, out, report = lazy_synthesized
    tasks = load_tasks(out)
    assert len(tasks) == 3 == report.verdicts["killed"]
    for tf in tasks:
        assert LAZY not in tf.task.fail_to_pass + tf.task.pass_to_pass
        assert len(tf.task.fail_to_pass) + len(tf.task.pass_to_pass) == 7
        fixed = grade_patch(tf, tf.gold_patch, test_python=PYTHON)
        assert fixed.resolved, (tf.task.task_id, fixed)
        assert not grade_patch(tf, None, test_python=PYTHON).resolved
    assert report.dropped_pass_to_pass == {tf.task.task_id: [LAZY] for tf in tasks}
    assert report.to_json()["dropped_pass_to_pass"] == report.dropped_pass_to_pass
    assert f"3 pass_to_pass test(s) that fail on the gold tree dropped from 3 task(s) ({LAZY})" in report.summary()


def test_a_rerun_finds_the_trimmed_tasks_identical(lazy_synthesized) -> None:
    repo, out, _ = lazy_synthesized
    again = synthesize(repo, out, SynthConfig(n=3, seed=1, workers=2, test_python=PYTHON), project="calc",
                       source="repo:calc")  # fmt: skip
    assert again.tasks == []
    assert len(again.existing) == 3
    assert again.verdicts["already_in_out"] == 3


def _mean_mutant(repo: Path) -> Mutant:
    original = (repo / "calc/stats.py").read_text()
    mutated = original.replace("sum(values) / len(values)", "sum(values) * len(values)")
    assert mutated != original
    return Mutant("calc/stats.py", "wrong_operator", 4, "/ -> *", original, mutated, "0123456789abcdef")


def test_a_task_whose_fail_to_pass_test_fails_as_graded_on_the_gold_tree_is_refused(tmp_path: Path) -> None:
    repo = write_project(tmp_path / "p", SETUP_FILES)
    verdict = Verdict(_mean_mutant(repo), "killed", [STATS[0]], [SETUP, *STATS[1:]])
    assert gold_check(repo, verdict, timeout_s=120, test_python=PYTHON) == "gold_unresolved"
    # Graded the other way round (test_setup first) the gold tree resolves, but test_setup passes on the broken tree
    # too: no fail_to_pass test; dropped, test_mean is graded first again.
    other_way = Verdict(verdict.mutant, "killed", [SETUP, STATS[0]], STATS[1:])
    assert gold_check(repo, other_way, timeout_s=120, test_python=PYTHON) == "gold_unresolved"
    # Without the order dependence the task goes through whole.
    plain = write_project(tmp_path / "plain")
    fine = Verdict(_mean_mutant(plain), "killed", [STATS[0]], STATS[1:])
    checked = gold_check(plain, fine, timeout_s=120, test_python=PYTHON)
    assert checked == (fine, [], [])


def test_dropping_pass_to_pass_tests_is_confirmed_by_another_graded_run(tmp_path: Path) -> None:
    repo = write_project(tmp_path / "p", LAZY_FILES)
    verdict = Verdict(_mean_mutant(repo), "killed", [STATS[0]], [LAZY, *STATS[1:]])
    checked = gold_check(repo, verdict, timeout_s=120, test_python=PYTHON)
    assert not isinstance(checked, str)
    assert checked[0].pass_to_pass == STATS[1:]
    assert checked[1] == [LAZY]
    assert checked[0].fail_to_pass == [STATS[0]]
    # One run finds the test to drop but cannot confirm the shorter run: the task is refused, not written unchecked.
    assert gold_check(repo, verdict, timeout_s=120, test_python=PYTHON, runs=1) == "gold_unresolved"


def test_synthesis_writes_no_task_whose_gold_tree_fails_as_graded(tmp_path: Path) -> None:
    repo = write_project(tmp_path / "p", SETUP_FILES)
    # With seed 1 the first mutant killed breaks mean (test_mean flips): it is refused, the next two are written.
    report = synthesize(repo, tmp_path / "out", SynthConfig(n=2, seed=1, workers=2, test_python=PYTHON),
                        project="calc", source="repo:calc")  # fmt: skip
    assert report.verdicts["gold_unresolved"] == 1
    assert report.verdicts["killed"] == len(report.tasks) == 2
    assert "task(s) not written, as their gold tree fails there" in report.summary()
    for tf in load_tasks(tmp_path / "out"):
        assert STATS[0] not in tf.task.fail_to_pass
        assert grade_patch(tf, tf.gold_patch, test_python=PYTHON).resolved, tf.task.task_id


def test_a_fail_to_pass_test_that_passes_as_graded_on_the_broken_tree_is_dropped(tmp_path: Path) -> None:
    repo = write_project(tmp_path / "p", LEAK_FILES)
    verdict = Verdict(_mean_mutant(repo), "killed", [STATS[0], CACHED], [CACHE, *STATS[1:]])
    checked = gold_check(repo, verdict, timeout_s=120, test_python=PYTHON)
    assert not isinstance(checked, str)
    assert checked.verdict.fail_to_pass == [STATS[0]]
    assert checked.dropped_fail_to_pass == [CACHED]
    assert checked.verdict.pass_to_pass == [CACHE, *STATS[1:]]
    assert checked.dropped_pass_to_pass == []


def test_a_task_that_doing_nothing_resolves_is_refused(tmp_path: Path) -> None:
    repo = write_project(tmp_path / "p", LEAK_FILES)
    verdict = Verdict(_mean_mutant(repo), "killed", [CACHED], [CACHE, *STATS[1:]])
    assert gold_check(repo, verdict, timeout_s=120, test_python=PYTHON) == "broken_resolved"


def test_synthesis_writes_fail_to_pass_tests_that_fail_as_graded_on_the_broken_tree(tmp_path: Path) -> None:
    repo = write_project(tmp_path / "p", LEAK_FILES)
    report = synthesize(repo, tmp_path / "out", SynthConfig(n=3, seed=1, workers=2, test_python=PYTHON),
                        project="calc", source="repo:calc")  # fmt: skip
    tasks = load_tasks(tmp_path / "out")
    assert len(tasks) == len(report.tasks) == 3
    for tf in tasks:
        broken = grade_patch(tf, None, test_python=PYTHON)
        assert broken.fail_to_pass_passed == 0, tf.task.task_id
        assert grade_patch(tf, tf.gold_patch, test_python=PYTHON).resolved, tf.task.task_id
    assert report.dropped_fail_to_pass, report.summary()
    assert all(ids == [CACHED] for ids in report.dropped_fail_to_pass.values())
    assert report.to_json()["dropped_fail_to_pass"] == report.dropped_fail_to_pass
    assert "fail_to_pass test(s) that pass on the broken tree dropped from" in report.summary()
