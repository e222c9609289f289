"""Verifying mutants: the whole suite runs against each one, in parallel workers, each in its own copy of the repo.

A mutant becomes a task only when the suite still collects (every test that passed on the original is reported
again), no run timed out, and at least one of those tests now fails. The tests that flip are its fail_to_pass,
the ones that stay green its pass_to_pass. Tests that already fail on the original are left out of both.
"""

from __future__ import annotations

import queue
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from agent.tasks.errors import SynthError
from agent.tasks.files import copy_repo
from agent.tasks.grading import runner_config
from agent.tasks.mutate import Mutant
from sandbox.patch.apply import drop_stale_bytecode
from sandbox.testing.grading import PASSING, normalise_test_id
from sandbox.testing.models import TestRunResult
from sandbox.testing.runner import run_tests


@dataclass
class Baseline:
    passing: list[str]
    failing: list[str]
    """Tests that fail on the original; they are graded by no task."""
    duration_s: float


@dataclass
class Verdict:
    mutant: Mutant
    status: str
    """`killed` (kept), `survived`, `no_collect`, `timeout`."""
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    result: TestRunResult | None = None

    @property
    def kept(self) -> bool:
        return self.status == "killed"


def outcomes(result: TestRunResult) -> dict[str, str]:
    return {normalise_test_id(case.id): case.outcome for case in result.tests}


def run_suite(workspace: Path, *, timeout_s: int, test_python: str | None) -> TestRunResult:
    return run_tests(workspace, timeout_s=timeout_s, backend="local", config=runner_config(test_python))


def measure_baseline(repo: Path, *, timeout_s: int, test_python: str | None) -> Baseline:
    """Run the original suite; a SynthError when it does not run or nothing passes."""
    result = run_suite(repo, timeout_s=timeout_s, test_python=test_python)
    if result.status not in ("passed", "failed") or result.collection_errors:
        raise SynthError(
            f"the original test suite does not run cleanly (status {result.status}, "
            f"{result.collection_errors} collection errors):\n{result.output_tail[-1500:]}"
        )
    seen = outcomes(result)
    passing = sorted(t for t, o in seen.items() if o in PASSING)
    if not passing:
        raise SynthError("no test of the project passes on the original code, so no mutant can be verified")
    failing = sorted(t for t, o in seen.items() if o not in PASSING and o != "skipped")
    return Baseline(passing, failing, result.duration_s)


def judge(mutant: Mutant, result: TestRunResult, baseline: Baseline) -> Verdict:
    if result.status == "timeout":
        return Verdict(mutant, "timeout", result=result)
    if result.status not in ("passed", "failed") or result.collection_errors:
        return Verdict(mutant, "no_collect", result=result)
    seen = outcomes(result)
    if any(t not in seen for t in baseline.passing):
        return Verdict(mutant, "no_collect", result=result)
    flipped = [t for t in baseline.passing if seen[t] not in PASSING]
    if not flipped:
        return Verdict(mutant, "survived", result=result)
    kept = [t for t in baseline.passing if seen[t] in PASSING]
    return Verdict(mutant, "killed", flipped, kept, result)


class Verifier:
    """A pool of worker copies of the repo; `verify` takes one, writes the mutant, runs the suite, restores it.

    Safe to call from as many threads as there are workers.
    """

    def __init__(self, repo: Path, workers: int, *, timeout_s: int, test_python: str | None, baseline: Baseline):
        self.timeout_s = timeout_s
        self.test_python = test_python
        self.baseline = baseline
        self._tmp = tempfile.TemporaryDirectory(prefix="sb-synth-")
        self._free: queue.Queue[Path] = queue.Queue()
        for i in range(workers):
            self._free.put(copy_repo(repo, Path(self._tmp.name) / f"w{i}"))

    def verify(self, mutant: Mutant) -> Verdict:
        workdir = self._free.get()
        target = workdir / mutant.path
        try:
            target.write_text(mutant.mutated, encoding="utf-8")
            drop_stale_bytecode([target])
            result = run_suite(workdir, timeout_s=self.timeout_s, test_python=self.test_python)
        finally:
            target.write_text(mutant.original, encoding="utf-8")
            drop_stale_bytecode([target])
            for cache in workdir.rglob(".pytest_cache"):
                shutil.rmtree(cache, ignore_errors=True)
            self._free.put(workdir)
        return judge(mutant, result, self.baseline)

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
