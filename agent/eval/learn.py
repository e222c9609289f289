"""The learning half of a round: training attempts become trajectories, trajectories become skills.

The eval keeps its own data dir (`<out>/home`): its skill bank starts empty (or with the starter pack when asked)
so what held-out tasks see with skills is what training taught. One-shot attempts are recorded here in the shape
the MCP server captures (a failing `run_tests`, the `apply_patch`, the verifying `run_tests`), so the same
distiller reads them; agentic attempts are recorded by the server itself. Held-out trajectories are marked
processed at once: they must never teach.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agent.eval.records import AttemptRecord
from agent.eval.solver import SolveResult
from agent.tasks.model import TaskFolder
from skills_store.models import Skill, Step
from skills_store.trajectories.store import SQLiteTrajectoryStore
from skills_store.trajectories.summaries import FileChange, PatchSummary, TestFailure, TestRunSummary

if TYPE_CHECKING:
    from skills_store.bank import SkillBank
    from skills_store.distill.runner import PassReport

SOURCE = "skillbank-eval"
DISTILLER = "heuristic"


def open_store(home: Path) -> SQLiteTrajectoryStore:
    home.mkdir(parents=True, exist_ok=True)
    return SQLiteTrajectoryStore(home / "trajectories.db")


def open_eval_bank(home: Path, embedder: str, *, starter: bool) -> SkillBank:
    from skills_store.bank import SkillBank
    from skills_store.embedders import make_embedder

    bank = SkillBank.open(home, make_embedder(embedder))
    if starter:
        from skills_store.starter import seed_if_new

        seed_if_new(bank)
    return bank


def record_attempt(store: SQLiteTrajectoryStore, tf: TaskFolder, solved: SolveResult, record: AttemptRecord) -> str:
    """Record a one-shot attempt as the trajectory an MCP session would have produced; returns its id."""
    tid = f"eval-{record.key.replace('/', '-')}"[:120]
    traj = store.ensure(tid, task=tf.task.problem_statement[:2000], source=SOURCE, workspace=str(tf.repo))
    if traj.status == "closed":
        return tid
    failing = [TestFailure(id=f["id"], message=f["message"]) for f in solved.failing_output]
    ids = [f.id for f in failing]
    first = TestRunSummary(status="failed", failed=len(failing), failing=ids, failures=failing)
    steps = [Step(kind="tool_call", tool="run_tests", args={"tests": None}, result=_dump(first), ok=False)]
    if solved.patch:
        applied = PatchSummary(
            applied=record.status != "patch_refused",
            files=[FileChange(action="modify", path=p) for p in _patch_files(solved.patch)],
        )
        steps.append(Step(kind="tool_call", tool="apply_patch", args={"patch": solved.patch, "dry_run": False},
                          result=_dump(applied), ok=applied.applied))  # fmt: skip
        if record.resolved:
            after = TestRunSummary(status="passed")
        else:
            after = TestRunSummary(status="failed", failed=len(failing), failing=ids, failures=failing)
        steps.append(Step(kind="tool_call", tool="run_tests", args={"tests": None}, result=_dump(after),
                          ok=record.resolved))  # fmt: skip
    store.append(tid, steps)
    store.close_trajectory(tid, "success" if record.resolved else "failure")
    return tid


def _dump(summary: TestRunSummary | PatchSummary) -> dict[str, object]:
    return summary.model_dump(mode="json")


def _patch_files(patch: str) -> list[str]:
    out = []
    for line in patch.splitlines():
        if line.startswith("+++ "):
            path = line[4:].split("\t", 1)[0].strip()
            out.append(path[2:] if path.startswith("b/") else path)
    return out


def retire(store: SQLiteTrajectoryStore, trajectory_ids: Sequence[str]) -> None:
    """Mark held-out trajectories processed, so no distillation ever learns from them."""
    ids = [t for t in trajectory_ids if t]
    if ids:
        store.mark_processed(ids, DISTILLER)


def distill(store: SQLiteTrajectoryStore, bank: SkillBank) -> PassReport:
    from skills_store.distill.heuristic import HeuristicDistiller
    from skills_store.distill.runner import distill_pending

    return distill_pending(store, bank, HeuristicDistiller())


def skill_lookup(bank: SkillBank, k: int = 3):  # type: ignore[no-untyped-def]
    """Skills for a list of failure queries, as `run_tests` suggests them: at most `k` over the first three
    failures, only those whose calibrated relevance reaches the threshold, most relevant first; often none.

    The same cut as the product's (issue 11: distracting skills made agents worse than none), so the eval measures
    what an agent is really shown; the top hits of a plain search would put three skills in every prompt.
    """

    def lookup(queries: list[str]) -> list[Skill]:
        return [hit.skill for hit in bank.suggest_for_failures([q[:8000] for q in queries[:3]], k=k)]

    return lookup
