"""Reading pytest's junit report and short summary into per-test outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.testing.failure_lines import HINT_CHARS, exception_line, search_line
from sandbox.testing.models import TestCase
from sandbox.testing.results import (
    junit_node_id,
    mangle,
    merge_reports,
    parse_junit,
    parse_summary,
    summary_totals,
)

# Written by pytest 9 with `-o junit_family=xunit1` for a module with one test of each outcome.
JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1"
failures="3" skipped="2" tests="9" time="0.037"><testcase classname="tests.test_a" name="test_pass"
file="tests/test_a.py" line="1" time="0.010" /><testcase classname="tests.test_a" name="test_fail"
file="tests/test_a.py" line="2" time="0.020"><failure message="assert 1 == 2">&gt;   def test_fail(): assert 1 == 2
E   assert 1 == 2

tests/test_a.py:3: AssertionError</failure></testcase><testcase classname="tests.test_a" name="test_err"
file="tests/test_a.py" line="3" time="0.000"><failure message="ValueError: bad value 42">E   ValueError: bad value 42

tests/test_a.py:4: ValueError</failure></testcase><testcase classname="tests.test_a" name="test_setup_err"
file="tests/test_a.py" line="6" time="0.000"><error
message="failed on setup with &quot;RuntimeError: fixture boom&quot;">E   RuntimeError: fixture boom

tests/test_a.py:6: RuntimeError</error></testcase><testcase classname="tests.test_a" name="test_skip"
file="tests/test_a.py" line="7" time="0.000"><skipped type="pytest.skip" message="nope"
>tests/test_a.py:8: nope</skipped></testcase><testcase classname="tests.test_a" name="test_xfail"
file="tests/test_a.py" line="9" time="0.001"><skipped
type="pytest.xfail" message="" /></testcase><testcase classname="tests.test_a" name="test_xpass" file="tests/test_a.py"
line="11" time="0.000" /><testcase classname="tests.test_a.TestK" name="test_p[1]" file="tests/test_a.py" line="16"
time="0.000" /><testcase classname="tests.test_a.TestK" name="test_p[a::b]" file="tests/test_a.py" line="16"
time="0.000"><failure message="AssertionError: assert 'a::b' == 1">E   AssertionError: assert 'a::b' == 1

tests/test_a.py:18: AssertionError</failure></testcase></testsuite></testsuites>"""

SUMMARY = """
=========================== short test summary info ============================
FAILED tests/test_a.py::test_fail - assert 1 == 2
FAILED tests/test_a.py::test_err - ValueError: bad value 42
FAILED tests/test_a.py::TestK::test_p[a::b] - AssertionError: assert 'a::b' == 1
ERROR tests/test_a.py::test_setup_err - RuntimeError: fixture boom
SKIPPED [1] tests/test_a.py:8: nope
XFAIL tests/test_a.py::test_xfail
XPASS tests/test_a.py::test_xpass
PASSED tests/test_a.py::test_pass
PASSED tests/test_a.py::TestK::test_p[1]
==== 3 failed, 2 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.47s =====
"""

COLLECTION_ERROR = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="0"
skipped="0" tests="1"><testcase classname="" name="tests.test_bad" file="tests/test_bad.py" time="0.000"><error
message="collection failure">ImportError while importing test module '/w/tests/test_bad.py'.
Traceback:
tests/test_bad.py:1: in &lt;module&gt;
    import nonexistent_mod
E   ModuleNotFoundError: No module named 'nonexistent_mod'</error></testcase></testsuite></testsuites>"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "junit.xml"
    path.write_text(text)
    return path


def test_junit_report_gives_every_outcome_with_node_ids(tmp_path: Path) -> None:
    report = parse_junit(write(tmp_path, JUNIT))
    outcomes = {case.id: case.outcome for case in report.tests}
    assert report.found
    assert outcomes == {
        "tests/test_a.py::test_pass": "passed",
        "tests/test_a.py::test_fail": "failed",
        "tests/test_a.py::test_err": "failed",
        "tests/test_a.py::test_setup_err": "error",
        "tests/test_a.py::test_skip": "skipped",
        "tests/test_a.py::test_xfail": "xfailed",
        "tests/test_a.py::test_xpass": "passed",
        "tests/test_a.py::TestK::test_p[1]": "passed",
        "tests/test_a.py::TestK::test_p[a::b]": "failed",
    }
    assert next(c for c in report.tests if c.id.endswith("test_fail")).duration_s == pytest.approx(0.02)


def test_summary_tells_an_xpass_from_a_pass_in_the_merged_report(tmp_path: Path) -> None:
    merged = merge_reports(parse_junit(write(tmp_path, JUNIT)), parse_summary(SUMMARY))
    outcomes = {case.id: case.outcome for case in merged.tests}
    assert outcomes["tests/test_a.py::test_xpass"] == "xpassed"
    assert outcomes["tests/test_a.py::test_pass"] == "passed"


def test_failure_message_starts_with_the_crash_line_and_keeps_the_traceback_end(tmp_path: Path) -> None:
    report = parse_junit(write(tmp_path, JUNIT), message_chars=200)
    fail = next(c for c in report.tests if c.id.endswith("test_fail"))
    assert fail.message is not None
    assert fail.message.splitlines()[0] == "assert 1 == 2"
    assert fail.message.rstrip().endswith("tests/test_a.py:3: AssertionError")
    assert len(fail.message) <= 200


def test_messages_are_capped_to_the_configured_length(tmp_path: Path) -> None:
    long = "x" * 5000
    xml = JUNIT.replace("bad value 42", long)
    report = parse_junit(write(tmp_path, xml), message_chars=300)
    assert all(len(case.message or "") <= 300 for case in report.tests)


def test_collection_error_is_an_error_named_by_its_module_with_the_import_error(tmp_path: Path) -> None:
    report = parse_junit(write(tmp_path, COLLECTION_ERROR))
    (case,) = report.tests
    assert report.collection_errors == 1
    assert case.id == "tests/test_bad.py"
    assert case.outcome == "error"
    assert case.message is not None
    assert case.message.startswith("collection failed: ModuleNotFoundError: No module named 'nonexistent_mod'")


def test_missing_or_broken_junit_file_is_reported_as_not_found(tmp_path: Path) -> None:
    assert not parse_junit(tmp_path / "absent.xml").found
    assert not parse_junit(write(tmp_path, "<testsuites><testcase")).found


def test_summary_alone_lists_tests_and_counts_unnamed_skips() -> None:
    report = parse_summary(SUMMARY)
    assert report.found
    assert len(report.tests) == 8
    assert report.skipped_without_id == 1
    assert {c.outcome for c in report.tests} == {"failed", "error", "xfailed", "xpassed", "passed"}


def test_summary_of_a_collection_error_counts_it() -> None:
    report = parse_summary("ERROR tests/test_bad.py\n!!! Interrupted: 1 error during collection !!!")
    assert report.collection_errors == 1
    assert report.tests[0].outcome == "error"


def test_output_without_a_summary_is_not_a_report() -> None:
    assert not parse_summary("all good, trust me\n10 passed").found


def test_totals_line_is_read_into_result_fields() -> None:
    assert summary_totals(SUMMARY) == {
        "failed": 3,
        "passed": 2,
        "skipped": 1,
        "xfailed": 1,
        "xpassed": 1,
        "errors": 1,
    }


@pytest.mark.parametrize(
    "node_id",
    [
        "tests/test_a.py::test_x",
        "tests/test_a.py::TestK::test_p[a::b]",
        "tests/sub/test_b.py::TestA::TestB::test_c[1-2]",
        "test_top.py::test_y",
    ],
)
def test_node_id_survives_the_junit_round_trip(node_id: str) -> None:
    classname, name = mangle(node_id)
    assert junit_node_id(node_id.split("::")[0], classname, name) == node_id


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("assert 1 == 2\nE   assert 1 == 2\n\ntests/test_a.py:3: AssertionError", "AssertionError: assert 1 == 2"),
        ("ValueError: bad value 42\n\ntests/test_a.py:4: ValueError", "ValueError: bad value 42"),
        ('failed on setup with "RuntimeError: boom"\ntests/t.py:6: RuntimeError', "RuntimeError: boom"),
        ("collection failed: ModuleNotFoundError: No module named 'x'", "ModuleNotFoundError: No module named 'x'"),
        ("KeyError: 'k'\n\nsrc/m.py:9: KeyError", "KeyError: 'k'"),
        # A class of the test's own module is qualified in the message, not on the crash line: named once.
        (
            "test_msg.MyDomainError: order 42\nE   test_msg.MyDomainError: order 42\n\ntest_msg.py:4: MyDomainError",
            "test_msg.MyDomainError: order 42",
        ),
        ("boom: it broke\n\nsrc/m.py:9: MyError", "MyError: boom: it broke"),  # a message that is not the type
        # A missing fixture: the head is where, the `E` line is what.
        (
            'failed on setup with "file /w/tests/test_fx.py, line 1\n  def test_uses(nothere):\n'
            "E       fixture 'nothere' not found\n>       available fixtures: cache, capfd",
            "fixture 'nothere' not found",
        ),
        # Doctests: the head is the example's number.
        (
            "002 \n003     >>> demo()\nExpected:\n    2\nGot:\n    1\n\n/w/mod.py:3: DocTestFailure",
            "DocTestFailure: >>> demo() expected 2 got 1",
        ),
        (
            "002 \n003     >>> {}[\"k\"]\nUNEXPECTED EXCEPTION: KeyError('k')\nTraceback (most recent call last):\n"
            "  File \"<doctest mod.demo[0]>\", line 1, in <module>\nKeyError: 'k'\n/w/mod.py:3: UnexpectedException",
            "KeyError: 'k'",
        ),
    ],
)
def test_exception_line_names_the_exception_type_and_message(message: str, expected: str) -> None:
    assert exception_line(TestCase(id="t", outcome="failed", message=message)) == expected


_FIXTURES = ", ".join(f"fixture_number_{i}" for i in range(40))
_MISSING_FIXTURE = (
    'failed on setup with "file /w/test_a.py, line 1\n  def test_a(db_sesion):\n'
    "E       fixture 'db_sesion' not found\n[+4 more lines; full report in element text]\n"
    "file /w/test_a.py, line 1\n  def test_a(db_sesion):\nE       fixture 'db_sesion' not found\n"
    f">       available fixtures: {_FIXTURES}\n>       use 'pytest --fixtures [testpath]' for help on them.\n\n"
    '/w/test_a.py:1"'
)


def test_search_line_of_a_missing_fixture_adds_pytests_hint_with_the_fixture_list_cut() -> None:
    case = TestCase(id="test_a.py::test_a", outcome="error", message=_MISSING_FIXTURE)
    line = search_line(case)
    assert exception_line(case) == "fixture 'db_sesion' not found"  # what the distiller names it by: unchanged
    assert line is not None
    head, available, use = line.split(" > ")
    assert head == "fixture 'db_sesion' not found"
    assert available.startswith("available fixtures: fixture_number_0, fixture_number_1,")
    assert available.endswith(", ...")
    assert len(available) <= HINT_CHARS + 5
    assert use == "use 'pytest --fixtures [testpath]' for help on them."


@pytest.mark.parametrize(
    "message",
    [
        "ValueError: bad value 42\n> not a hint\n\ntests/test_a.py:4: ValueError",
        "assert 1 == 2\nE   assert 1 == 2\n>   x = 1\n\ntests/test_a.py:3: AssertionError",
    ],
)
def test_search_line_of_any_other_failure_is_its_exception_line(message: str) -> None:
    case = TestCase(id="t", outcome="failed", message=message)
    assert search_line(case) == exception_line(case)


def test_exception_line_of_a_test_without_message_is_none() -> None:
    assert exception_line(TestCase(id="t", outcome="failed")) is None


def test_junit_report_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    secret = write(tmp_path, JUNIT).rename(tmp_path / "elsewhere.xml")
    link = tmp_path / "junit.xml"
    link.symlink_to(secret)
    report = parse_junit(link)
    assert not report.found
    assert report.problem is not None
    assert report.tests == []


def test_oversized_junit_report_is_not_parsed(tmp_path: Path) -> None:
    report = parse_junit(write(tmp_path, JUNIT), max_bytes=100)
    assert not report.found
    assert report.problem is not None
    assert "over the 100 limit" in report.problem
