"""`run_eval`: rounds of learn-then-test, with and without skills, resumable (the engine of `skillbank eval`).

Each round: every training task is solved with skills (its trajectory is recorded), the new trajectories are
distilled into the eval's skill bank, then every held-out task is solved K times with skills and K times without.
Every attempt starts from a fresh copy of the broken tree and is graded on another fresh copy (SWE-bench rules,
`agent.tasks.grading`). Both conditions of a (round, task, attempt) get the same sampling seed, so the paired
comparison compares like with like. Finished attempts are in `attempts.jsonl`; a rerun skips them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from agent.eval.edits import drop_test_files
from agent.eval.learn import distill, open_eval_bank, open_store, record_attempt, retire, skill_lookup
from agent.eval.records import (
    CONFIG_API_ERRORS,
    AttemptLog,
    AttemptRecord,
    Condition,
    Phase,
    attempt_key,
    error_class,
)
from agent.eval.report import summarize, write_html
from agent.eval.scripted import is_scripted, scripted_model
from agent.eval.solver import SolveContext, Solver, SolveResult
from agent.eval.split import EvalError, frozen_split, write_split
from agent.tasks.grading import check_test_python, fresh_copy, grade_patch
from agent.tasks.model import TaskFolder, load_tasks
from sandbox.errors import SandboxError, SandboxUnavailable

Job = tuple[str, Phase, Condition, int]
#: Progress callback: (what is running, attempts done in it, attempts in it).
ProgressFn = Callable[[str, int, int], None]


@dataclass
class EvalConfig:
    tasks: Path
    out: Path
    model: str
    rounds: int = 1
    attempts: int = 1
    mode: Literal["oneshot", "agentic"] = "oneshot"
    seed: int = 0
    heldout_fraction: float = 0.5
    candidates: int = 3
    train_attempts: int = 1
    timeout_s: int = 300
    test_python: str | None = None
    embedder: str = "minilm"
    starter_skills: bool = False
    max_requests: int = 30
    max_train: int | None = None
    max_heldout: int | None = None
    max_output_tokens: int = 2048
    """One-shot: most tokens per sampled answer."""

    def identity(self) -> dict[str, Any]:
        """What must not change when resuming in the same output dir."""
        keep = ("model", "mode", "seed", "heldout_fraction", "candidates", "embedder", "starter_skills")
        return {k: v for k, v in asdict(self).items() if k in keep}


def _check_resumable(config: EvalConfig) -> None:
    """Refuse an `--out` that holds an eval with another identity (reads only)."""
    path = config.out / "config.json"
    if path.is_file():
        before = json.loads(path.read_text(encoding="utf-8"))
        changed = [k for k, v in config.identity().items() if before.get(k) != v]
        if changed:
            raise EvalError(f"{config.out} holds an eval with other {', '.join(changed)}; use a new --out dir")


def _check_embedder(spec: str) -> None:
    """Refuse an embedder spec the bank would refuse when it opens, without loading a model."""
    from skills_store.embedders.specs import MINILM_SPECS

    if spec in MINILM_SPECS or (spec.startswith("sentence-transformers:") and spec.partition(":")[2].strip()):
        return
    if spec == "hash" or spec.startswith("hash:"):
        from skills_store.embedders.specs import build_inner

        try:
            build_inner(spec)  # a few numbers: building it is the exact check
        except ValueError as exc:
            raise EvalError(f"bad embedder {spec!r}: the hash {exc} (hash:384)") from None
        return
    raise EvalError(
        f"unknown embedder {spec!r}: use 'minilm' ('minilm:int8', 'minilm:onnxruntime', 'minilm:torch'), "
        "'sentence-transformers:<model name or path>' or 'hash'"
    )


def _model(config: EvalConfig, tasks: Mapping[str, TaskFolder], env: Mapping[str, str]):  # type: ignore[no-untyped-def]
    if is_scripted(config.model):
        return scripted_model(config.model, tasks)
    from agent.llm import resolve_model

    return resolve_model(config.model, env)


def run_eval(config: EvalConfig, env: Mapping[str, str], progress: ProgressFn | None = None) -> dict[str, Any]:
    """Run (or resume) the eval in `config.out`; returns the summary that is also written to results.json.

    Everything that can refuse the run (the task set, a changed identity, the model and its key, the embedder,
    the test interpreter, the agentic solver) is checked before anything is written: a refused run leaves `--out`
    as it was, so the corrected command is not then refused as "another model".
    """
    if config.rounds < 1 or config.attempts < 1 or config.train_attempts < 1 or config.candidates < 1:
        raise EvalError("--rounds, --attempts, --train-attempts and --candidates must be at least 1")
    tasks = {tf.task.task_id: tf for tf in load_tasks(config.tasks)}
    split = frozen_split(config.out, list(tasks.values()), config.seed, config.heldout_fraction, save=False)
    _check_resumable(config)
    model = _model(config, tasks, env)
    _check_embedder(config.embedder)
    check_test_python(config.test_python)
    home = config.out / "home"
    agentic = _agentic_solver(config, model, home) if config.mode == "agentic" else None
    write_split(config.out, split)
    (config.out / "config.json").write_text(json.dumps(config.identity(), indent=2) + "\n", encoding="utf-8")
    train = split.train[: config.max_train]
    heldout = split.heldout[: config.max_heldout]
    store = open_store(home)
    # The agentic solver's server opens the bank itself: hold it here only while distilling.
    bank = open_eval_bank(home, config.embedder, starter=config.starter_skills) if config.mode == "oneshot" else None
    log = AttemptLog(config.out / "attempts.jsonl")
    rounds_path = config.out / "rounds.json"
    rounds: dict[str, Any] = json.loads(rounds_path.read_text()) if rounds_path.is_file() else {}
    solver = agentic or _oneshot_solver(config, model, bank)
    try:
        for r in range(1, config.rounds + 1):
            jobs: list[Job] = [(tid, "train", "skills", k) for tid in train for k in range(config.train_attempts)]
            ran = _run_jobs(f"round {r}: training", jobs, r, tasks, solver, store, log, config, progress)
            info = rounds.setdefault(str(r), {"added": 0, "merged": 0})
            if ran or "skills" not in info:  # else resumed after this round's distillation
                _distill_round(info, bank, store, home, config)
                rounds_path.write_text(json.dumps(rounds, indent=2) + "\n", encoding="utf-8")
            conditions: tuple[Condition, ...] = ("skills", "no_skills")
            # Task-major order: an interrupted run still has both conditions of the tasks it reached (paired).
            jobs = [(tid, "heldout", cond, k) for tid in heldout for k in range(config.attempts)
                    for cond in conditions]  # fmt: skip
            _run_jobs(f"round {r}: held-out", jobs, r, tasks, solver, store, log, config, progress)
    finally:
        solver.close()
        if bank is not None:
            bank.close()
        store.close()
    summary = summarize(log, split.model_dump(), train, heldout, config, rounds)
    (config.out / "results.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    write_html(summary, config.out / "report.html")
    return summary


def summary_of(config: EvalConfig) -> dict[str, Any]:
    """The summary of what `config.out` holds so far, without solving anything (for a run still going)."""
    tasks = load_tasks(config.tasks)
    split = frozen_split(config.out, tasks, config.seed, config.heldout_fraction)
    rounds_path = config.out / "rounds.json"
    rounds = json.loads(rounds_path.read_text()) if rounds_path.is_file() else {}
    log = AttemptLog(config.out / "attempts.jsonl")
    return summarize(log, split.model_dump(), split.train[: config.max_train], split.heldout[: config.max_heldout],
                     config, rounds)  # fmt: skip


def _distill_round(info: dict[str, Any], bank: Any, store: Any, home: Path, config: EvalConfig) -> None:
    distiller_bank = bank or open_eval_bank(home, config.embedder, starter=config.starter_skills)
    try:
        report = distill(store, distiller_bank)
        info["skills"] = distiller_bank.count()
    finally:
        if bank is None:
            distiller_bank.close()
    info["added"] += len(report.added)
    info["merged"] += len(report.merged)


def _oneshot_solver(config: EvalConfig, model: Any, bank: Any) -> Solver:
    from agent.eval.oneshot import OneShotConfig, OneShotSolver

    cfg = OneShotConfig(candidates=config.candidates, timeout_s=config.timeout_s, test_python=config.test_python,
                        max_output_tokens=config.max_output_tokens)  # fmt: skip
    return OneShotSolver(model, cfg, skill_lookup(bank))


def _agentic_solver(config: EvalConfig, model: Any, home: Path) -> Solver:
    try:
        from agent.eval.agentic import AgenticSolver
    except ImportError as exc:
        raise EvalError(f"--mode agentic is not available: the bundled agent cannot be imported ({exc})") from exc
    return AgenticSolver(model, home, embedder=config.embedder, test_python=config.test_python,
                         max_requests=config.max_requests, timeout_s=config.timeout_s * 2)  # fmt: skip


def _run_jobs(
    label: str,
    jobs: list[Job],
    round_: int,
    tasks: Mapping[str, TaskFolder],
    solver: Solver,
    store: Any,
    log: AttemptLog,
    config: EvalConfig,
    progress: ProgressFn | None,
) -> int:
    """Run the jobs not in the log yet; returns how many ran."""
    ran = 0
    for done, (tid, phase, condition, k) in enumerate(jobs):
        if progress:
            progress(label, done, len(jobs))
        if log.done(attempt_key(round_, phase, condition, tid, k)):
            continue
        record = _attempt(tasks[tid], round_, phase, condition, k, solver, store, config)
        log.append(record)
        ran += 1
    if progress:
        progress(label, len(jobs), len(jobs))
    return ran


def _attempt(
    tf: TaskFolder, round_: int, phase: Phase, condition: Condition, k: int, solver: Solver, store: Any,
    config: EvalConfig,
) -> AttemptRecord:  # fmt: skip
    started = time.monotonic()
    with fresh_copy(tf) as workspace:
        ctx = SolveContext(tf, workspace, condition == "skills", phase, k, config.seed + 7919 * round_)
        try:
            solved = solver.solve(ctx)
        except (SandboxUnavailable, OSError) as exc:
            raise _setup_failed(tf, phase, condition, k, exc) from exc
        except SandboxError as exc:
            solved = SolveResult(error=f"{type(exc).__name__}: {exc}"[:500])
    patch = drop_test_files(solved.patch)
    if not patch.strip() and error_class(solved.error) in CONFIG_API_ERRORS:
        raise EvalError(
            f"{phase} attempt {k} of {tf.task.task_id} ({condition}): the model's API refused the configuration "
            f"({solved.error}); check the model's name and its key (OPENAI_API_KEY, ANTHROPIC_API_KEY). It was not "
            "logged, so the same command resumes there once this is fixed"
        )
    if not patch.strip():
        status = "solver_error" if solved.error and not solved.candidates else "no_patch"
        resolved, valid = False, status != "solver_error"
    else:
        try:
            grade = grade_patch(tf, patch, timeout_s=config.timeout_s, test_python=config.test_python)
        except (SandboxUnavailable, OSError) as exc:
            raise _setup_failed(tf, phase, condition, k, exc) from exc
        status, resolved, valid = grade.status, grade.resolved, grade.valid
    record = AttemptRecord(
        round=round_,
        phase=phase,
        condition=condition,
        task_id=tf.task.task_id,
        attempt=k,
        resolved=resolved,
        valid=valid,
        status=status,
        input_tokens=solved.input_tokens,
        output_tokens=solved.output_tokens,
        requests=solved.requests,
        cost_usd=solved.cost_usd,
        wall_s=round(time.monotonic() - started, 3),
        candidates=solved.candidates,
        best_reward=solved.best_reward,
        patch=patch,
        skills_shown=solved.skills_shown,
        trajectory_id=solved.trajectory_id,
        error=solved.error,
    )
    if phase == "train" and not solver.records_trajectories:
        record.trajectory_id = record_attempt(store, tf, solved, record)
    elif phase == "heldout" and solved.trajectory_id:
        retire(store, [solved.trajectory_id])
    return record


def _setup_failed(tf: TaskFolder, phase: Phase, condition: Condition, k: int, exc: BaseException) -> EvalError:
    """The machine or the configuration failed, not the model: the attempt is not logged (a rerun redoes it),
    and the eval stops, since every later attempt would fail the same way."""
    return EvalError(
        f"{phase} attempt {k} of {tf.task.task_id} ({condition}) could not run: {type(exc).__name__}: {exc}; "
        "it was not logged, so the same command resumes there once this is fixed"
    )
