"""What a session's test runs prove: a passing run of selected tests does not prove that the task is solved.

`run_tests(tests=[...])` runs only the selected tests, and its reward (1.0 when they pass) is about those tests
alone. When the whole suite failed earlier, a later pass of one unrelated test says nothing about the failure, so
neither the outcome the server infers for a session it closes (`closing.infer_outcome`) nor the reward a TRL
export stands behind (`trl_export.reward_of`) may read it as "solved".

The rule: each test the session saw failing stays *unproven* until a later run that selected it (or ran the whole
suite, `tests=["."]` included) no longer reports it. A run that lists fewer failures than it counts (the capture
keeps 20) leaves its whole selection unproven; so does a run that errored or timed out; one that collected no
tests changes nothing. The last run proves the task solved only when it passed and nothing is left unproven: a
whole-suite pass always, a run of selected tests when every test seen failing before was among them
(`tests=["tests/test_calc.py"]` covers `tests/test_calc.py::test_total`).

A custom `command` is taken as the whole suite (what it selects cannot be told apart), and steps other than
captured `run_tests` calls (a Claude Code Bash test run) carry no scope: they are judged by their reward alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skills_store.models import StoredStep, Trajectory
from skills_store.trajectories.summaries import TestRunSummary

#: The item that stands for "the whole suite" in the unproven set.
WHOLE_SUITE = "the whole suite"
#: A reward at least this high is a pass of every test the run selected.
SOLVED = 0.999


@dataclass(frozen=True)
class Run:
    """One captured `run_tests` call: what it selected (None: the whole suite) and what it found."""

    index: int
    selected: tuple[str, ...] | None
    summary: TestRunSummary

    @property
    def passed(self) -> bool:
        return self.summary.status == "passed"

    def covers(self, item: str) -> bool:
        """Whether this run re-ran `item` (a test id, a selection, or `WHOLE_SUITE`)."""
        if self.selected is None:
            return True
        return item != WHOLE_SUITE and any(_within(item, s) for s in self.selected)


@dataclass
class Evidence:
    runs: list[Run] = field(default_factory=list)
    unproven: list[str] = field(default_factory=list)
    """Tests (or selections) seen failing and not seen passing since, first seen first."""

    @property
    def last(self) -> Run | None:
        return self.runs[-1] if self.runs else None

    @property
    def last_pass_unproven(self) -> bool:
        """The last run passed, but only selected tests, and a failure seen earlier was not among them."""
        last = self.last
        return last is not None and last.passed and bool(self.unproven)

    def why(self) -> str:
        """Why the last pass proves nothing (for the closing note)."""
        last = self.last
        selected = ", ".join(last.selected or ()) if last is not None else ""
        more = len(self.unproven) - 3
        shown = ", ".join(self.unproven[:3]) + (f" and {more} more" if more > 0 else "")
        return (
            f"the last test run passed only the selected tests ({selected}), but {shown} failed in an earlier run "
            "and did not pass since"
        )


def _norm(path: str) -> str:
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") if path not in ("", "/") else ""


def _within(item: str, selection: str) -> bool:
    """Whether test id (or selection) `item` lies inside `selection` (a node id, a file or a directory)."""
    item, selection = _norm(item), _norm(selection)
    if selection in ("", "."):
        return True
    return item == selection or item.startswith((selection + "::", selection + "[", selection + "/"))


def _selected(args: Any) -> tuple[str, ...] | None:
    tests = args.get("tests") if isinstance(args, dict) else None
    if isinstance(tests, str):
        tests = [tests]
    if not isinstance(tests, list):
        return None
    chosen = tuple(str(t) for t in tests if str(t).strip())
    if any(_norm(t) in ("", ".") for t in chosen):  # `tests=["."]` is the whole suite
        return None
    return chosen or None


def runs(steps: list[StoredStep]) -> list[Run]:
    """The captured `run_tests` calls among `steps`, in order (a call that failed as a tool has no summary)."""
    out = []
    for step in steps:
        if step.kind == "tool_call" and step.tool == "run_tests":
            summary = TestRunSummary.read(step.result)
            if summary is not None:
                out.append(Run(step.index, _selected(step.args), summary))
    return out


def _step(unproven: list[str], run: Run) -> list[str]:
    """The unproven items after `run`: those it re-ran are judged again by what it found."""
    s = run.summary
    if s.status == "no_tests":  # it ran nothing: it neither clears nor adds anything
        return unproven
    kept = {item: None for item in unproven if not run.covers(item)}
    known = s.status in ("passed", "failed")
    if known:
        kept.update(dict.fromkeys(s.failing))
    if not known or len(s.failing) < s.failed + s.errors:  # errored, timed out, or failures left unlisted
        kept.update(dict.fromkeys(run.selected or (WHOLE_SUITE,)))
    return list(kept)


def evidence(traj: Trajectory) -> Evidence:
    """Follow the session's runs in order (needs the steps: `store.get(tid)`, not `with_steps=False`)."""
    found = Evidence(runs(traj.steps))
    for run in found.runs:
        found.unproven = _step(found.unproven, run)
    return found


def solved_reward(traj: Trajectory) -> float | None:
    """The trajectory's reward as evidence that the task is solved: its last run's reward, except that a pass of
    selected tests that leaves an earlier failure unproven stands for the reward of the last run before it that
    counted (0.0 when that run was stored without its reward)."""
    if traj.reward is None or traj.reward < SOLVED:
        return traj.reward
    all_runs = runs(traj.steps)
    counted: list[Run] = []  # the runs that were not unproven passes when they ran
    unproven: list[str] = []
    for run in all_runs:
        unproven = _step(unproven, run)
        if not (run.passed and unproven):
            counted.append(run)
    if not all_runs or counted[-1:] == all_runs[-1:]:
        return traj.reward
    if not counted or counted[-1].summary.reward is None:
        return 0.0
    return counted[-1].summary.reward
