"""From a finished command and its report to a run's status, counts, test list and output tail.

The status of a pytest run trusts the junit report over the exit code and the exit code over the terminal text:

- `timeout`: the command was killed for its timeout.
- `no_tests`: pytest exit 5 (nothing collected), or a clean report with no tests.
- `error`: no junit report (the run crashed, was killed, or exited early: terminal text is not trusted to call a
  run passed), a collection error, pytest exit 2-4, a signal death, a run `pytest.exit()` stopped (with exit 0 it
  would read as passed with the tests after it never run), or a report that contradicts the exit code (exit 1 with
  no failure in the report is output spoofing, as SWE-bench checks; exit 0 with failures likewise).
- `failed` / `passed`: exit 1 with failures in the report / exit 0 with a clean report.

With `command`, pytest started anywhere in it writes its junit report where it is read (`PYTEST_ADDOPTS`), and
that report is trusted over the command's exit code (a pipe, `|| true` or a later step hides pytest's): failures in
it make the run `failed` whatever the exit code, a collection error or `pytest.exit()` `error`, no test
`no_tests`; a clean one with tests `passed` on exit 0, `failed` (another step failed) otherwise. Without a report
(another runner), only the exit code counts: 0 passed; 126, 127 (cannot run) or a signal death error; anything else
failed; and when no test result was seen in the output either, a warning says so.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from sandbox.exec.base import ExecResult, describe_exit
from sandbox.testing.models import OUTCOME_ORDER, RunStatus, TestCase
from sandbox.testing.results import ParsedReport

_COUNT_FIELDS = {
    "passed": "passed",
    "failed": "failed",
    "error": "errors",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
}


_CONFTEST_RE = re.compile(r"^ImportError while loading conftest '([^'\n]*)'\.$", re.MULTILINE)
_E_LINE_RE = re.compile(r"^E {3}([^\n]*)$", re.MULTILINE)
#: pytest's line for a requested node id that matches no test (exit 4): `ERROR: not found: /ws/tests/t.py::nope`.
_NOT_FOUND_RE = re.compile(r"^ERROR: not found: (\S[^\n]*?)\s*$", re.MULTILINE)
#: Where pytest was when it was interrupted (the timeout's SIGINT): `path/test_x.py:12: KeyboardInterrupt`.
_INTERRUPTED_AT_RE = re.compile(r"^(\S[^\n]*?:\d+): KeyboardInterrupt$", re.MULTILINE)
#: What pytest prints when a test or a hook calls `pytest.exit(reason, returncode=...)` during the run.
_EXIT_CALLED_RE = re.compile(r"^!{3,} _pytest\.outcomes\.Exit: (.*?) !{3,}$", re.MULTILINE)

#: `python -m pytest` with an interpreter that has no pytest: `/ws/.venv/bin/python: No module named pytest`.
_NO_PYTEST_RE = re.compile(r"^(?:(\S[^\n]*?): )?No module named pytest\s*$", re.MULTILINE)

#: What pytest's exit statuses mean (0, 1 and 5 are handled before).
_EXIT_MEANING = {2: "interrupted", 3: "internal error", 4: "usage error: check the options and paths"}


def count_outcomes(report: ParsedReport, totals: dict[str, int] | None = None) -> dict[str, int]:
    """The result's count fields (`total`, `passed`, `failed`, `errors`...) for the tests of `report`.

    The outcome counts are pytest's own: a test whose teardown failed counts with its own outcome and once more as
    an error (`ParsedReport.outcomes`). `total` is the number of tests, one per node id (as listed in `tests`), so the
    outcome counts can add up to more. `totals` (pytest's final line, see `summary_totals`) are used instead when
    they count more: a runner started through `command` without `-r` prints no per-test lines, only that line.
    """
    tally = Counter(str(outcome) for case in report.tests for outcome in report.outcomes_of(case))
    counts = {field: tally.get(outcome, 0) for outcome, field in _COUNT_FIELDS.items()}
    counts["skipped"] += report.skipped_without_id
    tests = len(report.tests) + report.skipped_without_id
    if totals:
        from_line = {field: totals.get(field, 0) for field in _COUNT_FIELDS.values()}
        if sum(from_line.values()) > sum(counts.values()):
            teardowns = sum(counts.values()) - tests  # the line counts the failed teardowns the report names too
            counts, tests = from_line, sum(from_line.values()) - teardowns
    counts["total"] = tests
    return counts


def per_test_counts(report: ParsedReport, counts: dict[str, int]) -> dict[str, int]:
    """`counts` with every test counted once, by its listed (worst) outcome: a passing test whose teardown failed
    is an error here, not a pass and an error. The reward's pass rate is taken from these."""
    once = dict(counts)
    for case in report.tests:
        outcomes = report.outcomes_of(case)
        if len(outcomes) > 1:
            for outcome in outcomes:
                once[_COUNT_FIELDS[outcome]] -= 1
            once[_COUNT_FIELDS[case.outcome]] += 1
    return {field: max(count, 0) for field, count in once.items()}


def decide_status(
    run: ExecResult,
    report: ParsedReport,
    counts: dict[str, int],
    *,
    junit_found: bool,
    command_mode: bool,
    root: Path | None = None,
) -> tuple[RunStatus, list[str]]:
    """The status of the run and the warnings that explain an `error` (see the module docstring)."""
    code = run.exit_code
    killed = describe_exit(code)
    if run.timed_out:
        return "timeout", [_timeout_note(run, counts, command_mode, root)]
    if command_mode:
        if code in (126, 127) or killed:
            return "error", [f"the command could not run or was {killed or 'not found'} (exit {code})"]
        if junit_found or report.problem:
            return _command_status(run, report, counts, root)
        status: RunStatus = "passed" if code == 0 else "failed"
        if counts["total"]:
            return status, []
        return status, [
            f"no test result was seen (pytest wrote no report and the output names no test): `{status}` follows the "
            f"command's exit status ({code}) alone" + (f"; {hint}" if (hint := _missing_pytest(run)) else "")
        ]
    bad = counts["failed"] + counts["errors"]
    if code == 5:
        return "no_tests", []
    named = _not_found(run, root)
    if code == 4 and named:
        return "error", [
            f"pytest exit 4: no test matches {named[:500]} (the file is there, the name in it is not); check the "
            "names: run the whole file, or list its tests with `command='python -m pytest --collect-only -q'`"
        ]
    if not junit_found:
        if report.problem:
            return "error", [f"{report.problem}; the result is not trusted"]
        hint = _missing_pytest(run)
        if hint:
            return "error", [f"pytest did not run: {hint}"]
        return "error", [_no_report(code, killed, ran_to_end=report.found, conftest=_conftest_failure(run))]
    if report.collection_errors:
        return "error", [f"{report.collection_errors} test module(s) failed to import or collect"]
    stopped = _EXIT_CALLED_RE.search(run.stdout)
    if stopped is not None and code in (0, 1):
        return "error", [
            f"pytest.exit() stopped the run early ({stopped.group(1)[:200]!r}, exit {code}): the tests after it did "
            "not run, so the result is not trusted"
        ]
    if code == 0:
        if bad:
            return "error", [f"pytest exited 0 but the report shows {bad} failure(s); the result is not trusted"]
        return ("passed" if counts["total"] else "no_tests"), []
    if code == 1:
        if bad:
            return "failed", []
        return "error", ["pytest exited 1 but the report shows no failure (output spoofing?); result not trusted"]
    return "error", [f"pytest exit {code}: {killed or _EXIT_MEANING.get(code or 0, 'unexpected exit status')}"]


def _command_status(
    run: ExecResult, report: ParsedReport, counts: dict[str, int], root: Path | None
) -> tuple[RunStatus, list[str]]:
    """The status of a `command` run in which pytest wrote its junit report (see the module docstring)."""
    code = run.exit_code
    if report.problem:
        return "error", [f"{report.problem}; the result is not trusted"]
    if report.collection_errors:
        return "error", [f"{report.collection_errors} test module(s) failed to import or collect"]
    stopped = _EXIT_CALLED_RE.search(run.stdout)
    if stopped is not None:
        return "error", [f"pytest.exit() stopped the run early ({stopped.group(1)[:200]!r}): not trusted"]
    bad = counts["failed"] + counts["errors"]
    if bad:
        if code == 0:
            return "failed", [
                f"the command exited 0 but pytest's report has {bad} failure(s): a pipe, `|| true` or a later step "
                "hid pytest's exit status; the run is failed"
            ]
        return "failed", []
    if not counts["total"]:
        named = _not_found(run, root)
        if named:
            return "error", [f"pytest found no test named {named[:500]} (the file is there, the name in it is not)"]
        return "no_tests", [f"pytest ran no test (exit {code}): nothing was collected, selected or run"]
    if code == 0:
        return "passed", []
    return "failed", [
        f"pytest's report shows no failure, but the command exited {code}: another step of the command failed"
    ]


def _missing_pytest(run: ExecResult) -> str:
    """A hint for a run whose interpreter has no pytest (`python -m pytest` printed `No module named pytest`)."""
    found = _NO_PYTEST_RE.search(run.stderr) or _NO_PYTEST_RE.search(run.stdout)
    if found is None:
        return ""
    return (
        f"{found.group(1) or 'the interpreter'} has no pytest: install it there (`python -m pip install pytest` in "
        "the workspace's .venv), or point SKILLBANK_TEST_PYTHON at an interpreter that has it"
    )


def _not_found(run: ExecResult, root: Path | None) -> str:
    """The requested node ids pytest found no test for (`ERROR: not found: ...`), workspace-relative, or ''."""
    missing = _NOT_FOUND_RE.findall(run.stdout) or _NOT_FOUND_RE.findall(run.stderr)
    return ", ".join(dict.fromkeys(_relative(m, root) for m in missing))


def _relative(path: str, root: Path | None) -> str:
    """A path pytest printed absolute, relative to the workspace as test ids are (as printed when outside it)."""
    return path.removeprefix(os.path.join(str(root), "")) if root is not None else path


def _timeout_note(run: ExecResult, counts: dict[str, int], command_mode: bool, root: Path | None) -> str:
    """What a timed-out run got done: interrupted at the timeout (as Ctrl-C), pytest lists the tests that finished
    and prints where it was stopped (`path:line: KeyboardInterrupt`), in the test that hangs or is slow."""
    head = f"the run timed out after {run.duration_s:g} s"
    where = _INTERRUPTED_AT_RE.findall(run.stdout) or _INTERRUPTED_AT_RE.findall(run.stderr)
    if where:
        place = _relative(where[-1], root)
        if os.path.isabs(place) or "site-packages/" in place:
            head += (
                f"; it was stopped at {place}, in no test file (pytest-xdist's controller waiting for its workers, "
                "or library code a test called): the test that hangs or is too slow is among those not listed"
            )
        else:
            head += f"; it was stopped at {place} (a test there hangs or is too slow for timeout_s)"
    if command_mode:
        return head
    done = counts.get("total", 0)
    return head + (f"; the {done} test(s) that finished are listed" if done else "; no test had finished")


def _conftest_failure(run: ExecResult) -> str | None:
    """`path: error line` when pytest stopped because a conftest.py failed to import (it exits 4, as for bad
    options), from its `ImportError while loading conftest '...'` line and the `E   ...` line below it."""
    for stream in (run.stderr, run.stdout):
        found = _CONFTEST_RE.search(stream)
        if found:
            error = _E_LINE_RE.search(stream, found.end())
            return f"{found.group(1)}: {error.group(1).strip()}" if error else found.group(1)
    return None


def _no_report(code: int | None, killed: str | None, *, ran_to_end: bool, conftest: str | None = None) -> str:
    """Why an `error` run has no junit report, as far as the exit status and the output tell."""
    head = "pytest wrote no junit report"
    if conftest is not None:
        return f"{head}: a conftest.py failed to import ({conftest}); fix it, then run the tests again"
    if killed:
        hint = ": out of memory or another limit?" if code == 128 + 9 else ""  # SIGKILL
        return f"{head} ({killed} (exit {code}){hint}); the run crashed or exited before the end"
    if code in _EXIT_MEANING:
        return f"{head} (exit {code}: {_EXIT_MEANING[code or 0]}); the run exited before the end"
    if code in (0, 1) and ran_to_end:
        return (
            f"{head} although pytest ran to the end (exit {code}): its junitxml plugin is probably disabled "
            "(`-p no:junitxml` in addopts or PYTEST_ADDOPTS); remove that so run_tests can read the results"
        )
    return f"{head} (exit {code}); the run crashed or exited before the end"


def order_tests(tests: list[TestCase], limit: int) -> tuple[list[TestCase], int]:
    """Failures and errors first, then the rest in report order; at most `limit`, returning how many were cut."""
    ordered = sorted(tests, key=lambda case: OUTCOME_ORDER.get(case.outcome, 9))
    return ordered[:limit], max(len(ordered) - limit, 0)


def output_tail(run: ExecResult, chars: int) -> tuple[str, bool]:
    """The end of stdout, then the end of stderr (given at most a third), within `chars`; and whether cut."""
    err = run.stderr.strip("\n")
    err_part = f"\n--- stderr ---\n{err[-(chars // 3) :]}" if err.strip() else ""
    room = max(chars - len(err_part), 0)
    out = run.stdout
    out_part = out[-room:] if room else ""
    truncated = len(out_part) < len(out) or (bool(err) and len(err) > chars // 3)
    return out_part + err_part, truncated
