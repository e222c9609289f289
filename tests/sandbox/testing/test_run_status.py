"""The status of a run from its exit code and report, and the shaping of tests and output in the result."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.exec.base import ExecResult
from sandbox.testing.models import TestCase
from sandbox.testing.results import ParsedReport
from sandbox.testing.status import count_outcomes, decide_status, order_tests, output_tail


def run(exit_code: int | None, *, timed_out: bool = False, stdout: str = "", stderr: str = "") -> ExecResult:
    return ExecResult(exit_code=exit_code, stdout=stdout, stderr=stderr, timed_out=timed_out, duration_s=1.0)


def report(*outcomes: str, collection_errors: int = 0) -> ParsedReport:
    tests = [TestCase(id=f"t.py::t{i}", outcome=o) for i, o in enumerate(outcomes)]  # type: ignore[arg-type]
    return ParsedReport(tests=tests, found=True, collection_errors=collection_errors)


def status_of(exec_result: ExecResult, parsed: ParsedReport, *, junit: bool = True, command: bool = False) -> str:
    status, _ = decide_status(exec_result, parsed, count_outcomes(parsed), junit_found=junit, command_mode=command)
    return status


@pytest.mark.parametrize(
    ("exit_code", "outcomes", "expected"),
    [
        (0, ("passed", "skipped", "xfailed"), "passed"),
        (1, ("passed", "failed"), "failed"),
        (1, ("passed", "error"), "failed"),
        (5, (), "no_tests"),
        (0, (), "no_tests"),
        (2, ("passed",), "error"),
        (4, (), "error"),
    ],
)
def test_pytest_exit_code_and_report_decide_the_status(exit_code: int, outcomes: tuple[str, ...], expected: str):
    assert status_of(run(exit_code), report(*outcomes)) == expected


def test_exit_code_of_failure_with_a_clean_report_is_an_error_not_a_failure() -> None:
    status, warnings = decide_status(run(1), report("passed"), count_outcomes(report("passed")), junit_found=True,
                                     command_mode=False)  # fmt: skip
    assert status == "error"
    assert "spoofing" in warnings[0]


def test_exit_zero_with_failures_in_the_report_is_an_error() -> None:
    assert status_of(run(0), report("failed")) == "error"


@pytest.mark.parametrize("exit_code", [0, 1])
def test_a_run_stopped_by_pytest_exit_is_an_error_quoting_its_reason(exit_code: int) -> None:
    out = (
        "=== short test summary info ===\nPASSED t.py::t0\n1 passed in 0.1s\n"
        "!!!!!!!!!!!!!!!! _pytest.outcomes.Exit: giving up early !!!!!!!!!!!!!!!!\n"
    )
    outcomes = ("passed",) if exit_code == 0 else ("passed", "failed")
    parsed = report(*outcomes)
    status, warnings = decide_status(
        run(exit_code, stdout=out), parsed, count_outcomes(parsed), junit_found=True, command_mode=False
    )
    assert status == "error"
    assert "pytest.exit() stopped the run early ('giving up early'" in warnings[0]


def test_run_without_a_junit_report_is_an_error_even_if_the_output_claims_passes() -> None:
    claimed = ParsedReport(tests=[TestCase(id="t.py::t", outcome="passed")], found=True)
    status, warnings = decide_status(run(0), claimed, count_outcomes(claimed), junit_found=False, command_mode=False)
    assert status == "error"
    assert "no junit report" in warnings[0]


def test_killed_run_says_which_signal() -> None:
    _, warnings = decide_status(run(137), ParsedReport(), count_outcomes(ParsedReport()), junit_found=False,
                                command_mode=False)  # fmt: skip
    assert "SIGKILL" in warnings[0]


def test_collection_error_makes_the_run_an_error() -> None:
    assert status_of(run(2), report("error", collection_errors=1)) == "error"


def test_timeout_wins_over_everything() -> None:
    assert status_of(run(None, timed_out=True), report("passed")) == "timeout"


@pytest.mark.parametrize(("exit_code", "expected"), [(0, "passed"), (1, "failed"), (3, "failed"), (127, "error")])
def test_command_mode_status_comes_from_the_exit_code_alone(exit_code: int, expected: str) -> None:
    assert status_of(run(exit_code), ParsedReport(), junit=False, command=True) == expected


def test_counts_add_unnamed_skips_to_the_total() -> None:
    parsed = report("passed", "failed", "xpassed")
    parsed.skipped_without_id = 2
    counts = count_outcomes(parsed)
    assert counts == {
        "passed": 1,
        "failed": 1,
        "errors": 0,
        "skipped": 2,
        "xfailed": 0,
        "xpassed": 1,
        "total": 5,
    }


def test_failed_tests_come_first_and_only_passing_ones_are_cut() -> None:
    tests = [TestCase(id=f"p{i}", outcome="passed") for i in range(5)]
    tests += [TestCase(id="e", outcome="error"), TestCase(id="f", outcome="failed")]
    ordered, omitted = order_tests(tests, limit=4)
    assert [t.id for t in ordered] == ["f", "e", "p0", "p1"]
    assert omitted == 3


def test_output_tail_keeps_the_end_of_stdout_and_of_stderr_within_the_cap() -> None:
    tail, truncated = output_tail(run(1, stdout="a" * 10_000 + "END", stderr="warning: x"), 1000)
    assert len(tail) <= 1000
    assert "END" in tail
    assert tail.endswith("--- stderr ---\nwarning: x")
    assert truncated


def test_totals_line_counts_a_run_that_named_no_tests() -> None:
    counts = count_outcomes(ParsedReport(), {"passed": 10, "failed": 2, "deselected": 3})
    assert (counts["total"], counts["passed"], counts["failed"]) == (12, 10, 2)


@pytest.mark.parametrize(
    ("stopped_at", "says"),
    [
        ("/ws/tests/test_io.py:12", "stopped at tests/test_io.py:12 (a test there hangs or is too slow"),
        (
            "/usr/lib/python3.11/threading.py:331",
            "stopped at /usr/lib/python3.11/threading.py:331, in no test file (pytest-xdist's controller",
        ),
        (
            "/ws/.venv/lib/python3.11/site-packages/urllib3/connection.py:70",
            "in no test file (pytest-xdist's controller waiting for its workers, or library code a test called): the "
            "test that hangs or is too slow is among those not listed",
        ),
    ],
)
def test_a_timed_out_run_names_where_it_stopped_and_a_place_in_no_test_file_is_not_called_a_test(
    stopped_at: str, says: str
) -> None:
    """With pytest-xdist in addopts the interrupt lands in its controller: the note sent the agent to threading.py."""
    timed_out = run(None, timed_out=True, stdout=f"!!! KeyboardInterrupt !!!\n{stopped_at}: KeyboardInterrupt\n")
    status, [note] = decide_status(
        timed_out, report("passed"), count_outcomes(report("passed")), junit_found=True, command_mode=False,
        root=Path("/ws"),
    )  # fmt: skip
    assert status == "timeout"
    assert says in note
