"""`synthesize`: a project's tests and code -> verified bug-fix tasks (the engine of `skillbank tasks synth`).

1. The original suite runs once (the baseline); what fails there is graded by no task.
2. A traced run finds the lines the tests execute; every operator is applied at those lines (`mutate`).
3. Candidates are ordered by weight (`weights`: bug classes the skill bank knows come first), then verified in
   parallel workers (`verify`), consumed in that order so a seed gives the same tasks whatever finishes first.
4. A killed mutant whose set of flipped tests equals an earlier task's is equivalent by test outcome: dropped.
   The others are checked the way they will be graded (`gold_check`): the grader's own run of the listed tests
   (not the whole suite) on the gold tree. A pass_to_pass test that does not pass there (order- or
   run-shape-dependent) is dropped; a task whose fail_to_pass tests do not all pass there is not written. Then the
   same run on the broken tree: a fail_to_pass test that passes there (it failed only in the whole suite) is
   dropped, and a task none of whose fail_to_pass tests fails there (doing nothing would resolve it) is not
   written.
5. Each task is written as a folder (`model.write_task`) with a statement from the failing output. A task whose
   folder `out` already holds (an earlier run) is never rewritten: the same task (gold patch and graded tests)
   counts as made, a different one of that name is left alone and reported. So nothing stops a run halfway, and a
   rerun of the same command writes nothing new.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from agent.tasks.errors import SynthError
from agent.tasks.files import copy_repo
from agent.tasks.grading import fresh_copy, run_gold, run_graded
from agent.tasks.model import GOLD_PATCH, TASK_FILE, MutationInfo, Task, TaskFolder, write_task
from agent.tasks.mutate import Mutant, RealityCheck, all_mutants
from agent.tasks.statements import model_statement, offline_statement
from agent.tasks.synth_report import SynthReport
from agent.tasks.trace import traced_lines
from agent.tasks.verify import Verdict, Verifier, measure_baseline
from agent.tasks.weights import bank_error_classes, error_classes_of, operator_weights, weighted_order
from sandbox.errors import SandboxError
from sandbox.exec.interpreter import find_interpreter
from sandbox.testing.grading import grade, normalise_test_id
from skills_store.models import Skill

if TYPE_CHECKING:
    from pydantic_ai.models import Model

__all__ = ["SynthConfig", "SynthError", "SynthReport", "gold_check", "synthesize"]

GOLD_CHECK_RUNS = 3
"""Graded runs of one gold tree at most: one, plus one more after each round of dropped tests (the shorter id list
is a different run, so it is graded again)."""


class Checked(NamedTuple):
    """A task `gold_check` lets through: its verdict with the tests that do not grade as they should dropped."""

    verdict: Verdict
    dropped_pass_to_pass: list[str]
    """pass_to_pass tests that fail in the graded run of the gold tree."""
    dropped_fail_to_pass: list[str]
    """fail_to_pass tests that pass in the graded run of the broken tree."""


Refused = Literal["gold_unresolved", "broken_resolved"]


@dataclass
class SynthConfig:
    n: int
    seed: int = 0
    workers: int = 2
    timeout_s: int | None = None
    """Per-mutant suite timeout; None: 4 x the baseline's duration plus 20 s."""
    test_python: str | None = None
    max_candidates: int | None = None
    """Verify at most this many mutants (None: until `n` tasks or none left)."""


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._")[:40] or "project"


def synthesize(
    repo: Path,
    out: Path,
    config: SynthConfig,
    *,
    project: str,
    source: str,
    skills: list[Skill] | None = None,
    statement_model: Model | None = None,
    on_verdict: Callable[[Verdict, int], None] | None = None,
    on_candidates: Callable[[int], None] | None = None,
) -> SynthReport:
    """Write up to `config.n` verified tasks of `repo` into `out`; see the module doc."""
    started = time.monotonic()
    repo, out = repo.resolve(), out.resolve()
    if out.is_relative_to(repo):
        raise SynthError(f"--out {out} is inside the project {repo}; write the tasks elsewhere")
    report = SynthReport(project=project, bank_classes=bank_error_classes(skills or []))
    python = str(find_interpreter(repo, config.test_python).path)
    with tempfile.TemporaryDirectory(prefix="sb-baseline-") as tmp:  # the project itself is never written to
        work = copy_repo(repo, Path(tmp) / "repo")
        baseline = report.baseline = measure_baseline(work, timeout_s=900, test_python=config.test_python)
        timeout_s = config.timeout_s or int(baseline.duration_s * 4) + 20
        coverage = traced_lines(work, python, timeout_s=max(900, timeout_s * 4))
    candidates = weighted_order(all_mutants(repo, coverage), operator_weights(report.bank_classes), config.seed)
    if config.max_candidates is not None:
        candidates = candidates[: config.max_candidates]
    report.candidates = len(candidates)
    if on_candidates:
        on_candidates(len(candidates))
    if not candidates:
        raise SynthError(f"no mutable code that the tests execute was found in {repo}")
    outcomes_seen: set[frozenset[str]] = set()
    workers = max(1, config.workers)
    with (
        asyncio.Runner() as report.runner,
        Verifier(repo, workers, timeout_s=timeout_s, test_python=config.test_python, baseline=baseline) as verifier,
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sb-verify") as pool,
    ):
        pending: list[Future[Verdict]] = []
        queue = iter(candidates)
        real = RealityCheck()
        try:
            while report.made < config.n:
                while len(pending) < workers * 2 and (mutant := next(queue, None)) is not None:
                    if real(mutant):
                        pending.append(pool.submit(verifier.verify, mutant))
                    else:
                        report.unreal += 1
                if not pending:
                    break
                verdict = pending.pop(0).result()
                status = verdict.status
                if verdict.kept:
                    flipped = frozenset(verdict.fail_to_pass)
                    if flipped in outcomes_seen:
                        status = "equivalent"
                    else:
                        outcomes_seen.add(flipped)
                        status = _keep(
                            repo, out, verdict, project, source, statement_model, report, timeout_s, config.test_python
                        )
                report.verdicts[status] += 1
                if on_verdict:
                    on_verdict(verdict, report.made)
        finally:
            for future in pending:
                future.cancel()
    report.wall_s = time.monotonic() - started
    return report


def task_id(project: str, mutant: Mutant) -> str:
    return f"{slug(project)}-{mutant.operator.replace('_', '-')}-{mutant.key[:8]}"


def held_as(folder: Path, verdict: Verdict) -> str | None:
    """What `folder` holds of the task `verdict` would make: None (nothing), `same` (its gold patch and graded
    tests: the task; the statement may differ, a model writes it), or `other` (anything else, even unreadable)."""
    if not folder.exists():
        return None
    try:
        held = json.loads((folder / TASK_FILE).read_text(encoding="utf-8"))
        gold = (folder / GOLD_PATCH).read_text(encoding="utf-8")
        same = (
            gold == verdict.mutant.gold_patch
            and sorted(held.get("fail_to_pass") or []) == sorted(verdict.fail_to_pass)
            and sorted(held.get("pass_to_pass") or []) == sorted(verdict.pass_to_pass)
        )
    except (OSError, ValueError, AttributeError, TypeError):
        return "other"
    return "same" if same else "other"


def gold_check(
    repo: Path, verdict: Verdict, *, timeout_s: int, test_python: str | None, runs: int = GOLD_CHECK_RUNS
) -> Checked | Refused:
    """Grade the killed mutant's task the way `tasks check --gold` and `eval` will: the grader's run of the listed
    tests (`grading.run_gold`: fail_to_pass then pass_to_pass, not the whole suite) on a fresh task tree with the
    gold patch applied, then the same run on the broken tree (what an agent that changes nothing is graded on).

    Returns the verdict with the tests that do not grade as they should dropped (pass_to_pass tests failing on the
    gold tree, fail_to_pass tests passing on the broken one), and those tests. Refused: `gold_unresolved` when the
    gold tree cannot resolve the task that way (a fail_to_pass test fails there, the run is invalid: timed out,
    crashed; the gold patch does not apply; or tests are still dropped after `runs` runs: each drop changes the run,
    so it is graded again), `broken_resolved` when no fail_to_pass test fails on the broken tree.
    """
    mutant = verdict.mutant
    task = Task(
        task_id="gold-check",
        problem_statement="gold check",
        fail_to_pass=verdict.fail_to_pass,
        pass_to_pass=verdict.pass_to_pass,
        bug_class=mutant.operator,
        source="gold-check",
    )
    with tempfile.TemporaryDirectory(prefix="sb-gold-") as tmp:
        folder = write_task(Path(tmp), task, repo, {mutant.path: mutant.mutated}, mutant.gold_patch)
        fail_to_pass, pass_to_pass = list(verdict.fail_to_pass), list(verdict.pass_to_pass)
        for _ in range(max(1, runs)):
            tf = TaskFolder(
                task=task.model_copy(update={"fail_to_pass": fail_to_pass, "pass_to_pass": pass_to_pass}),
                path=folder,
                gold_patch=mutant.gold_patch,
            )
            try:
                result = run_gold(tf, timeout_s=timeout_s, test_python=test_python)
            except SandboxError:
                return "gold_unresolved"
            graded = grade(result, fail_to_pass, pass_to_pass)
            if not graded.resolved:
                if result.status not in ("passed", "failed") or not graded.fail_to_pass.all_pass:
                    return "gold_unresolved"
                pass_to_pass = graded.pass_to_pass.passed
                continue
            passing = set(_passing_on_broken(tf, fail_to_pass, pass_to_pass, timeout_s, test_python))
            if not passing:
                return Checked(
                    replace(verdict, fail_to_pass=fail_to_pass, pass_to_pass=pass_to_pass),
                    [t for t in verdict.pass_to_pass if t not in set(pass_to_pass)],
                    [t for t in verdict.fail_to_pass if t not in set(fail_to_pass)],
                )
            fail_to_pass = [t for t in fail_to_pass if t not in passing]
            if not fail_to_pass:
                return "broken_resolved"
    return "gold_unresolved"


def _passing_on_broken(
    tf: TaskFolder, fail_to_pass: list[str], pass_to_pass: list[str], timeout_s: int, test_python: str | None
) -> list[str]:
    """The fail_to_pass tests that pass in the grader's run of the task's broken tree (none when that run is cut
    short: a mutant that hangs or crashes the run is graded unresolved, as wanted)."""
    with fresh_copy(tf) as ws:
        result = run_graded(ws, tf, timeout_s=timeout_s, test_python=test_python)
    if result.status not in ("passed", "failed"):
        return []
    return grade(result, fail_to_pass, pass_to_pass).fail_to_pass.passed


def _keep(
    repo: Path,
    out: Path,
    verdict: Verdict,
    project: str,
    source: str,
    model: Model | None,
    report: SynthReport,
    timeout_s: int,
    test_python: str | None,
) -> str:
    """Write the killed mutant's task, its pass_to_pass trimmed to what its gold tree passes as graded, unless that
    tree does not resolve it or `out` holds its folder already (decided before any statement is written or paid
    for); returns the verdict to count."""
    checked = gold_check(repo, verdict, timeout_s=timeout_s, test_python=test_python)
    if isinstance(checked, str):
        return checked
    verdict, dropped, dropped_fail_to_pass = checked
    folder = out / task_id(project, verdict.mutant)
    held = held_as(folder, verdict)
    if held == "same":
        report.existing.append(folder)
        return "already_in_out"
    if held == "other":
        report.name_taken.append(folder)
        return "name_taken"
    report.tasks.append(_write(repo, out, verdict, project, source, model, report))
    if dropped:
        report.dropped_pass_to_pass[folder.name] = dropped
    if dropped_fail_to_pass:
        report.dropped_fail_to_pass[folder.name] = dropped_fail_to_pass
    return verdict.status


def _write(
    repo: Path, out: Path, verdict: Verdict, project: str, source: str, model: Model | None, report: SynthReport
) -> Path:
    mutant: Mutant = verdict.mutant
    gold = mutant.gold_patch
    flipped = set(verdict.fail_to_pass)
    failures = [c for c in (verdict.result.tests if verdict.result else []) if normalise_test_id(c.id) in flipped]
    if model is not None:
        statement, tokens = model_statement(model, project, failures, gold, report.runner)
        report.statement_tokens += tokens
    else:
        statement = offline_statement(project, failures, gold)
    task = Task(
        task_id=task_id(project, mutant),
        problem_statement=statement,
        fail_to_pass=verdict.fail_to_pass,
        pass_to_pass=verdict.pass_to_pass,
        bug_class=mutant.operator,
        source=source,
        mutation=MutationInfo(
            operator=mutant.operator, path=mutant.path, line=mutant.line, description=mutant.description
        ),
    )
    report.bug_classes[mutant.operator] += 1
    report.task_classes.update(error_classes_of("\n".join(c.message or "" for c in failures)))
    return write_task(out, task, repo, {mutant.path: mutant.mutated}, gold)
