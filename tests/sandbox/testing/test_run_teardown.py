"""A failing teardown: each test is listed once, and the counts are those of pytest's own summary line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.testing.config import RunnerConfig
from sandbox.testing.grading import grade
from sandbox.testing.results import summary_totals
from sandbox.testing.runner import failure_queries, run_tests

TEARDOWN = {
    "tests/test_td.py": """
        import pytest

        @pytest.fixture
        def td():
            yield
            raise ValueError("teardown boom")

        def test_fail(td):
            assert 1 == 2

        def test_pass(td):
            pass

        def test_clean():
            pass
    """,
}

#: Every outcome next to a failing teardown, and a setup error followed by one.
EVERY_PHASE = {
    "tests/test_phases.py": """
        import pytest

        @pytest.fixture
        def td():
            yield
            raise ValueError("teardown boom")

        @pytest.fixture
        def broken(td):
            raise RuntimeError("setup boom")

        def test_fail(td):
            assert 0

        def test_pass(td):
            pass

        def test_skip_in_body(td):
            pytest.skip("later")

        @pytest.mark.xfail(reason="known")
        def test_xfail(td):
            assert 0

        @pytest.mark.xfail(reason="known")
        def test_xpass(td):
            pass

        def test_setup_and_teardown(broken):
            pass

        @pytest.mark.skip(reason="never")
        def test_skipped(td):
            pass

        def test_clean():
            pass
    """,
}
FIELDS = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")


def plain_pytest_counts(ws: Path) -> dict[str, int]:
    """The counts on the final line of a plain `python -m pytest` run in `ws`."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=ws, capture_output=True, text=True
    )
    totals = summary_totals(proc.stdout)
    assert totals, proc.stdout
    return {field: totals.get(field, 0) for field in FIELDS}


def counts(result) -> dict[str, int]:
    return {field: getattr(result, field) for field in FIELDS}


def test_teardown_error_lists_each_test_once_with_pytests_counts(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(TEARDOWN)
    result = run_tests(ws, backend="local", config=runner_config)
    assert plain_pytest_counts(ws) == {"passed": 2, "failed": 1, "errors": 2, "skipped": 0, "xfailed": 0, "xpassed": 0}
    assert counts(result) == plain_pytest_counts(ws)
    assert result.status == "failed"
    assert result.total == 3
    outcomes = {case.id: case.outcome for case in result.tests}
    assert len(result.tests) == 3
    assert outcomes == {
        "tests/test_td.py::test_fail": "failed",
        "tests/test_td.py::test_pass": "error",
        "tests/test_td.py::test_clean": "passed",
    }


def test_teardown_error_is_in_the_message_after_the_failure(make_workspace, runner_config: RunnerConfig) -> None:
    result = run_tests(make_workspace(TEARDOWN), backend="local", config=runner_config)
    by_id = {case.id: case for case in result.tests}
    fail, passing = by_id["tests/test_td.py::test_fail"].message, by_id["tests/test_td.py::test_pass"].message
    assert fail is not None
    assert passing is not None
    assert fail.startswith("assert 1 == 2")
    assert fail.splitlines()[-1] == 'failed on teardown with "ValueError: teardown boom"'
    assert len(fail) <= runner_config.message_chars
    assert passing.startswith('failed on teardown with "ValueError: teardown boom"')
    assert failure_queries(result) == ["AssertionError: assert 1 == 2", "ValueError: teardown boom"]


def test_teardown_error_keeps_a_test_from_passing_in_reward_and_grading(
    make_workspace, runner_config: RunnerConfig
) -> None:
    result = run_tests(make_workspace(TEARDOWN), backend="local", config=runner_config)
    # one test of three passes cleanly; the counts' (passed + xpassed) / (... + failed + errors) would say 2/5
    assert result.reward.components["pass_rate"] == pytest.approx(1 / 3, abs=1e-4)
    report = grade(result, ["tests/test_td.py::test_pass"], ["tests/test_td.py::test_clean"])
    assert not report.resolved
    assert report.fail_to_pass.failed == ["tests/test_td.py::test_pass"]
    assert report.pass_to_pass.passed == ["tests/test_td.py::test_clean"]


def test_every_outcome_next_to_a_failing_teardown_counts_as_pytest_counts_it(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws = make_workspace(EVERY_PHASE)
    result = run_tests(ws, backend="local", config=runner_config)
    assert counts(result) == plain_pytest_counts(ws)
    assert result.total == 8
    assert len({case.id for case in result.tests}) == len(result.tests) == 8
    outcomes = {case.id.rsplit("::", 1)[1]: case.outcome for case in result.tests}
    assert outcomes == {
        "test_fail": "failed",
        "test_pass": "error",
        "test_skip_in_body": "error",
        "test_xfail": "xfailed",
        "test_xpass": "xpassed",
        "test_setup_and_teardown": "error",
        "test_skipped": "skipped",
        "test_clean": "passed",
    }


@pytest.mark.parametrize("files", [TEARDOWN, EVERY_PHASE], ids=["teardown", "every-phase"])
def test_command_mode_with_summary_lines_counts_like_pytest_too(
    make_workspace, runner_config: RunnerConfig, files: dict[str, str]
) -> None:
    ws = make_workspace(files)
    result = run_tests(ws, command=f"{sys.executable} -m pytest -rA", backend="local", config=runner_config)
    assert result.status == "failed"
    assert counts(result) == plain_pytest_counts(ws)
    assert len({case.id for case in result.tests}) == len(result.tests)
    assert all("at teardown of" not in case.id and "at setup of" not in case.id for case in result.tests)
