"""From a trajectory's steps to what the distillers reason about: test runs, edits, and fix episodes.

Steps come from the MCP tools (`run_tests`, `apply_patch`, captured by the server) and from the Claude Code hook
(`Bash` running a test command, `Edit`, `MultiEdit`, `Write`). Everything else (searches, thoughts, messages) is
context the heuristic distiller does not need.

A *fix episode* is a failure seen by a test run, then edits, then a run in which that failure is gone (the run
passed, or it covered the failing test and no longer reports it). A failure seen by two runs or more and never
fixed is a *pitfall*.

A failure gone from one run is not yet a fix the session kept (`held`): when the session's last run of the whole
suite (at or after that run) still fails, the fix counts only if that error is not back and, unless a whole-suite
run passed in between, every failure left there is an older one of another error. A test that failed with the same
error before the edits and still fails (its error only changed, as when an `except Exception:` hides the `KeyError`
and the test's assertion now fails), or a failure that was not there before the edits (the edit broke something),
means the edit did not fix what it seemed to: no fix episode.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from skills_store.distill.signature import ErrorSignature, from_failure, from_output
from skills_store.models import StoredStep, Trajectory
from skills_store.trajectories.shell_tests import runs_tests
from skills_store.trajectories.summaries import PatchSummary, TestRunSummary

_TOTALS_FAILED_RE = re.compile(r"\b\d+ (?:failed|errors?)\b")
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})


@dataclass
class Failure:
    test_id: str
    """The failing test's id; '' for a run that failed before any test (collection or start-up error)."""
    signature: ErrorSignature | None
    message: str = ""
    """The failure's report as the test run gave it (its traceback), when it gave one per test."""

    @property
    def key(self) -> str:
        return self.test_id or (self.signature.text if self.signature else "<run>")


@dataclass
class TestRun:
    __test__ = False  # not a pytest class

    index: int
    ok: bool
    scope: tuple[str, ...] | None
    """The tests the run selected; None for the whole suite."""
    failures: list[Failure]
    tool: str


@dataclass
class Edit:
    index: int
    files: list[str]
    diff: str
    """The change as unified-diff text (an `apply_patch` patch, or one made from an editor call)."""
    tool: str
    fuzzy: bool = False


@dataclass
class FixEpisode:
    failure: Failure
    edits: list[Edit]
    verified_by: TestRun
    failing_runs: int
    """How many test runs reported the failure before it was fixed."""
    suite_passed: bool = False
    """Whether a run of the whole suite passed at or after `verified_by` (the fix held to the end)."""


@dataclass
class Pitfall:
    failure: Failure
    failing_runs: int
    edits: list[Edit]
    """The edits tried while the failure persisted (none of them fixed it)."""
    last: Failure | None = None
    """The test's failure as the last run that reported it gave it (its error may have changed since the first)."""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    """Steps come from agents (`record_trajectory` takes any result): a field that is not a list counts as empty."""
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _relative(path: str, workspace: str | None) -> str:
    if workspace and path.startswith(workspace.rstrip("/") + "/"):
        return path[len(workspace.rstrip("/")) + 1 :]
    return path


def _mcp_test_run(step: StoredStep) -> TestRun | None:
    summary = TestRunSummary.read(step.result)
    if summary is None or summary.status == "no_tests":
        return None
    status = summary.status
    args = _dict(step.args)
    tests = args.get("tests")
    scope = tuple(str(t) for t in tests) if isinstance(tests, list) and tests else None
    failures = [Failure(f.id, from_failure(f.id or "run", f.message or None), f.message) for f in summary.failures]
    known = {f.test_id for f in failures}
    failures += [Failure(t, None) for t in summary.failing if t not in known]
    if status != "passed" and not failures:
        failures.append(Failure("", None))
    return TestRun(step.index, status == "passed", scope, failures, "run_tests")


def _shell_test_run(step: StoredStep) -> TestRun | None:
    command = _dict(step.args).get("command")
    if not isinstance(command, str) or not runs_tests(command):
        return None
    result = _dict(step.result)
    output = "\n".join(str(result.get(k) or "") for k in ("stdout", "stderr")) + "\n" + step.content
    pairs = from_output(output)
    ok = step.ok is not False and not pairs and not _TOTALS_FAILED_RE.search(output)
    failures = [Failure(test_id, sig) for test_id, sig in pairs]
    if not ok and not failures:
        failures.append(Failure("", None))
    return TestRun(step.index, ok, None, failures, step.tool or "Bash")


def _editor_diff(path: str, pairs: list[tuple[str, str]]) -> str:
    out = [f"--- a/{path}", f"+++ b/{path}"]
    for old, new in pairs:
        out.append("@@")
        out += [f"-{line}" for line in old.splitlines()]
        out += [f"+{line}" for line in new.splitlines()]
    return "\n".join(out)


def _edit(step: StoredStep, workspace: str | None) -> Edit | None:
    args = _dict(step.args)
    if step.tool == "apply_patch":
        summary = PatchSummary.read(step.result)
        if summary is None or not summary.applied or args.get("dry_run") or not isinstance(args.get("patch"), str):
            return None
        return Edit(step.index, [f.path for f in summary.files], args["patch"], "apply_patch", summary.fuzzy)
    if step.tool in EDIT_TOOLS and step.ok is not False:
        path = args.get("file_path")
        if not isinstance(path, str):
            return None
        rel = _relative(path, workspace)
        if step.tool == "Write":
            added = [f"+{line}" for line in str(args.get("content") or "").splitlines()]
            return Edit(step.index, [rel], "\n".join(["--- /dev/null", f"+++ b/{rel}", "@@", *added]), "Write")
        edits = args.get("edits") if step.tool == "MultiEdit" else [args]
        pairs = [(str(_dict(e).get("old_string") or ""), str(_dict(e).get("new_string") or "")) for e in _list(edits)]
        return Edit(step.index, [rel], _editor_diff(rel, pairs), step.tool) if pairs else None
    return None


def events(traj: Trajectory) -> list[TestRun | Edit]:
    """The test runs and successful edits of a trajectory, in order."""
    out: list[TestRun | Edit] = []
    for step in traj.steps:
        if step.kind != "tool_call" or not step.tool:
            continue
        if step.tool == "run_tests":
            run = _mcp_test_run(step)
        elif step.tool in ("Bash", "shell", "exec_command"):
            run = _shell_test_run(step)
        else:
            run = None
        if run is not None:
            out.append(run)
            continue
        edit = _edit(step, traj.workspace)
        if edit is not None:
            out.append(edit)
    return out


def _selects(entry: str, test_id: str) -> bool:
    entry = entry.rstrip("/")
    return test_id == entry or test_id.startswith((entry + "::", entry + "/"))


def covers(run: TestRun, failure: Failure, failed_in: TestRun) -> bool:
    """Whether `run` would have reported `failure` again had it still been there."""
    if run.scope is None:
        return True
    if not failure.test_id:
        return run.scope == failed_in.scope
    return any(_selects(entry, failure.test_id) for entry in run.scope)


@dataclass
class _Open:
    failure: Failure
    run: TestRun
    runs: int
    edits_from: int
    first: Failure
    """The failure as first seen (a pitfall is named by it; a fix by the failure the last edits removed)."""


def episodes(traj: Trajectory) -> tuple[list[FixEpisode], list[Pitfall]]:
    """The fix episodes and pitfalls of one trajectory (see the module doc)."""
    fixes: list[FixEpisode] = []
    edits: list[Edit] = []
    runs: list[TestRun] = []
    pending: dict[str, _Open] = {}
    for event in events(traj):
        if isinstance(event, Edit):
            edits.append(event)
            continue
        failing = {f.key for f in event.failures} if not event.ok else set()
        for key, item in list(pending.items()):
            if key in failing or not covers(event, item.failure, item.run):
                continue
            del pending[key]
            if item.edits_from < len(edits):
                fixes.append(FixEpisode(item.failure, edits[item.edits_from :], event, item.runs))
        runs.append(event)
        if event.ok:
            continue
        for failure in event.failures:
            seen = pending.get(failure.key)
            if seen is None:
                pending[failure.key] = _Open(failure, event, 1, len(edits), failure)
            else:
                item = seen
                item.runs += 1
                item.run = event
                if failure.signature is not None:
                    item.failure = failure
                    if item.first.signature is None:
                        item.first = failure
    pitfalls = [Pitfall(p.first, p.runs, edits[p.edits_from :], p.failure) for p in pending.values() if p.runs >= 2]
    return [fix for fix in fixes if held(fix, runs)], pitfalls


def held(fix: FixEpisode, runs: Sequence[TestRun]) -> bool:
    """Whether the session's last whole-suite run at or after `fix.verified_by` leaves the fix standing (see the
    module doc); sets `fix.suite_passed`. With no whole-suite run from then on nothing says otherwise: it holds."""
    last = next((r for r in reversed(runs) if r.scope is None and r.index >= fix.verified_by.index), None)
    if last is None:
        return True
    if last.ok:
        fix.suite_passed = True
        return True
    own = fix.failure.signature.text if fix.failure.signature else None
    if any((f.signature.text if f.signature else None) == own for f in last.failures):
        return False  # the same error is back
    if any(r.scope is None and r.ok and fix.verified_by.index <= r.index < last.index for r in runs):
        fix.suite_passed = True
        return True  # the suite passed with the fix in place: what failed after came with later work
    start = fix.edits[0].index if fix.edits else fix.verified_by.index
    before: dict[str, set[str | None]] = {}
    for run in runs:
        if run.index < start and not run.ok:
            for f in run.failures:
                before.setdefault(f.key, set()).add(f.signature.text if f.signature else None)
    for f in last.failures:
        seen = before.get(f.key)
        if not seen or own in seen or None in seen:
            return False  # a failure the edits brought, or a test of this error that still fails
    return True


def language_of(paths: Sequence[str]) -> str | None:
    """The language most of these files are written in, by extension."""
    counts: dict[str, int] = {}
    for path in paths:
        lang = EXTENSIONS.get(PurePosixPath(path).suffix.lower())
        if lang:
            counts[lang] = counts.get(lang, 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else None


EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".rs": "rust", ".java": "java", ".rb": "ruby",
    ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp", ".cs": "csharp", ".php": "php", ".kt": "kotlin",
}  # fmt: skip
