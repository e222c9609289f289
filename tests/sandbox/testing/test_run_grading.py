"""FAIL_TO_PASS / PASS_TO_PASS grading for the eval harness."""

from __future__ import annotations

from sandbox.testing.grading import grade
from sandbox.testing.models import Reward, TestCase, TestRunResult


def result(status: str = "failed", **outcomes: str) -> TestRunResult:
    return TestRunResult(
        status=status,  # type: ignore[arg-type]
        duration_s=1.0,
        exit_code=1,
        backend="local",
        command="pytest",
        tests=[TestCase(id=test_id.replace("__", "::"), outcome=o) for test_id, o in outcomes.items()],  # type: ignore[arg-type]
        reward=Reward(value=0.0, components={}),
        output_tail="",
    )


def test_task_is_resolved_when_every_listed_test_passes() -> None:
    run = result("passed", t_py__fixed="passed", t_py__kept="passed", t_py__known_xfail="xfailed")
    report = grade(run, ["t_py::fixed"], ["t_py::kept", "t_py::known_xfail"])
    assert report.resolved
    assert report.fail_to_pass.rate == 1.0


def test_a_broken_pass_to_pass_test_means_not_resolved() -> None:
    run = result(t_py__fixed="passed", t_py__kept="failed")
    report = grade(run, ["t_py::fixed"], ["t_py::kept"])
    assert not report.resolved
    assert report.pass_to_pass.failed == ["t_py::kept"]


def test_a_listed_test_the_run_never_reported_counts_as_failing() -> None:
    run = result("passed", t_py__fixed="passed")
    report = grade(run, ["t_py::fixed", "t_py::renamed"], [])
    assert not report.resolved
    assert report.fail_to_pass.missing == ["t_py::renamed"]
    assert report.fail_to_pass.rate == 0.5


def test_an_invalid_run_resolves_nothing() -> None:
    run = result("error", t_py__fixed="passed")
    assert not grade(run, ["t_py::fixed"], []).resolved


def test_ids_are_compared_without_a_leading_dot_slash() -> None:
    run = result("passed", t_py__fixed="passed")
    assert grade(run, ["./t_py::fixed"], []).resolved


def test_skipped_and_xpassed_tests_do_not_count_as_passing() -> None:
    run = result("passed", t_py__a="skipped", t_py__b="xpassed")
    report = grade(run, ["t_py::a", "t_py::b"], [])
    assert report.fail_to_pass.failed == ["t_py::a", "t_py::b"]
