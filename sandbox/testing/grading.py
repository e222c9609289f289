"""Grading a run against FAIL_TO_PASS / PASS_TO_PASS lists, the way SWE-bench does, for the eval harness.

A listed test counts as passing when the run reports it `passed` or `xfailed`; a test the run does not report at
all (not collected, renamed, the run crashed or timed out) counts as failing. A task is resolved when every
FAIL_TO_PASS test and every PASS_TO_PASS test passes.

A result lists at most `RunnerConfig.max_tests` tests (passing ones are left out first), so run exactly the graded
tests (`run_tests(..., tests=fail_to_pass + pass_to_pass)`) or raise `max_tests` for a big suite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from sandbox.testing.models import TestRunResult

PASSING = frozenset({"passed", "xfailed"})


class GroupGrade(BaseModel):
    """How the tests of one list fared."""

    passed: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)
    """Reported with another outcome (failed, error, skipped, xpassed)."""
    missing: list[str] = Field(default_factory=list)
    """Not reported by the run at all; they count as failing."""

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed) + len(self.missing)

    @property
    def all_pass(self) -> bool:
        return not self.failed and not self.missing

    @property
    def rate(self) -> float:
        """Share of the list that passes; 1.0 for an empty list."""
        return 1.0 if self.total == 0 else len(self.passed) / self.total


class GradeReport(BaseModel):
    resolved: bool
    """Every FAIL_TO_PASS and PASS_TO_PASS test passes (and the run was valid)."""
    fail_to_pass: GroupGrade
    pass_to_pass: GroupGrade
    run_status: str


def normalise_test_id(test_id: str) -> str:
    """A node id in a comparable form: forward slashes, no leading `./`, no surrounding space."""
    test_id = test_id.strip().replace("\\", "/")
    while test_id.startswith("./"):
        test_id = test_id[2:]
    return test_id


def grade(result: TestRunResult, fail_to_pass: Sequence[str], pass_to_pass: Sequence[str]) -> GradeReport:
    """Grade `result` against the two lists (node ids as pytest prints them)."""
    outcomes = {normalise_test_id(case.id): case.outcome for case in result.tests}
    valid = result.status in ("passed", "failed")
    f2p, p2p = _grade_group(fail_to_pass, outcomes), _grade_group(pass_to_pass, outcomes)
    return GradeReport(
        resolved=valid and f2p.all_pass and p2p.all_pass,
        fail_to_pass=f2p,
        pass_to_pass=p2p,
        run_status=result.status,
    )


def _grade_group(test_ids: Sequence[str], outcomes: Mapping[str, str]) -> GroupGrade:
    group = GroupGrade()
    for test_id in dict.fromkeys(test_ids):
        outcome = outcomes.get(normalise_test_id(test_id))
        if outcome is None:
            group.missing.append(test_id)
        elif outcome in PASSING:
            group.passed.append(test_id)
        else:
            group.failed.append(test_id)
    return group
