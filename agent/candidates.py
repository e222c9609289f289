"""Best-of-N: N independent attempts on isolated copies of the workspace, the best by `run_tests` reward applied.

Each attempt works in its own copy: a detached `git worktree` of a snapshot of the workspace (uncommitted and
untracked files included) when it is a git repo, else a plain copy made a git repo so it can be diffed. The
workspace venv is shared by a symlink. The winner is the highest reward, ties going to the smaller diff, and its
diff reaches the real workspace as one patch through the patch engine (all or nothing). Every attempt's
trajectory is closed with its own reward: failed attempts teach the distiller too.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, Field
from pydantic_ai.models import Model

from agent.run import AgentRunResult, Limits, solve
from agent.server import ServerCommand
from agent.session import Progress
from agent.tree import commit_tree, git, init_repo, is_git_repo, snapshot
from sandbox.errors import PatchError
from sandbox.patch import apply_patch

COPY_IGNORED = shutil.ignore_patterns(".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache")


class Attempt(BaseModel):
    index: int
    """1-based."""
    result: AgentRunResult | None = None
    error: str | None = None
    """Why the attempt produced no result at all (the copy could not be made, the server did not start)."""
    diff_lines: int = 0

    @property
    def reward(self) -> float:
        return self.result.reward if self.result else -1.0


class BestOfN(BaseModel):
    attempts: list[Attempt]
    best: int | None = None
    """Index (1-based) of the chosen attempt; None when no attempt produced a result."""
    applied_files: list[str] = Field(default_factory=list)
    apply_error: str | None = None

    @property
    def winner(self) -> AgentRunResult | None:
        return next((a.result for a in self.attempts if a.index == self.best), None)


def diff_size(diff: str) -> int:
    return sum(1 for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---")))


def choose(attempts: list[Attempt]) -> Attempt | None:
    """Highest reward; ties go to the smaller diff, then the earlier attempt."""
    scored = [a for a in attempts if a.result is not None]
    return min(scored, key=lambda a: (-a.reward, a.diff_lines, a.index)) if scored else None


@contextlib.contextmanager
def isolated_copy(workspace: Path, where: Path, base_commit: str | None) -> Iterator[Path]:
    """A throwaway copy of `workspace` at `where`, a git repo either way so attempts can be diffed; removed on exit."""
    try:
        if base_commit is not None:
            git(workspace, "worktree", "add", "--detach", "--quiet", str(where), base_commit)
        else:
            shutil.copytree(workspace, where, symlinks=True, ignore=COPY_IGNORED)
            init_repo(where)
        venv = workspace / ".venv"
        if venv.is_dir() and not (where / ".venv").exists():
            (where / ".venv").symlink_to(venv.resolve(), target_is_directory=True)
        yield where
    finally:
        if base_commit is not None:
            with contextlib.suppress(Exception):
                git(workspace, "worktree", "remove", "--force", str(where))
            with contextlib.suppress(Exception):
                git(workspace, "worktree", "prune")
        shutil.rmtree(where, ignore_errors=True)


async def best_of_n(
    task: str,
    workspace: Path,
    model: Model | Callable[[int], Model],
    n: int,
    *,
    parallel: int = 1,
    use_skills: bool = True,
    limits: Limits | None = None,
    server: ServerCommand | None = None,
    progress: Progress | None = None,
    stream: bool = False,
    tests: list[str] | None = None,
) -> BestOfN:
    """`n` attempts (at most `parallel` at once) and the best applied to `workspace`; see the module doc.

    `model` may be a factory of the attempt index (1-based) to vary models or settings between attempts.
    """
    if n < 1 or parallel < 1:
        raise ValueError("n and parallel must be at least 1")
    workspace = workspace.resolve()
    server = server or ServerCommand.default()
    base_commit = (
        commit_tree(workspace, snapshot(workspace), "skillbank best-of-n base") if is_git_repo(workspace) else None
    )
    attempts = [Attempt(index=i) for i in range(1, n + 1)]
    limiter = anyio.CapacityLimiter(parallel)
    first_up = anyio.Event()

    async def attempt(slot: Attempt, scratch: Path) -> None:
        def say(line: str) -> None:
            if progress is not None:
                progress(f"[{slot.index}/{n}] {line}")

        if slot.index > 1:  # the first server creates the data dir's stores (not safe to race); the rest follow
            await first_up.wait()
        async with limiter:
            chosen = model(slot.index) if callable(model) and not isinstance(model, Model) else model
            try:
                with isolated_copy(workspace, scratch / f"candidate-{slot.index}", base_commit) as copy:
                    result = await solve(
                        task, copy, chosen, use_skills=use_skills, limits=limits, server=server, progress=say,
                        stream=stream, tests=tests, label=f"candidate {slot.index}/{n}", on_connected=first_up.set,
                    )  # fmt: skip
            except Exception as exc:  # one broken attempt must not sink the others
                slot.error = f"{type(exc).__name__}: {exc}"
                say(f"attempt failed: {slot.error}")
                return
            finally:
                first_up.set()
            slot.result = result
            slot.diff_lines = diff_size(result.final_diff)

    with tempfile.TemporaryDirectory(prefix="skillbank-candidates-") as tmp:
        async with anyio.create_task_group() as group:
            for slot in attempts:
                group.start_soon(attempt, slot, Path(tmp))
    outcome = BestOfN(attempts=attempts)
    best = choose(attempts)
    if best is None or best.result is None:
        return outcome
    outcome.best = best.index
    diff = best.result.final_diff
    if diff:
        try:
            applied = await anyio.to_thread.run_sync(lambda: apply_patch(workspace, diff))
            outcome.applied_files = [f.path for f in applied.files]
        except PatchError as exc:
            outcome.apply_error = str(exc)
    return outcome


def table(outcome: BestOfN) -> list[dict[str, Any]]:
    """One row per attempt, for the CLI's table and `--json`."""
    rows = []
    for a in outcome.attempts:
        r = a.result
        tests = f"{r.tests.passed}/{r.tests.total}" if r and r.tests else "-"
        rows.append(
            {
                "attempt": a.index,
                "best": a.index == outcome.best,
                "reward": r.reward if r else None,
                "outcome": r.outcome if r else "error",
                "tests": tests,
                "tokens": r.tokens if r else 0,
                "requests": r.requests if r else 0,
                "diff_lines": a.diff_lines,
                "trajectory_id": r.trajectory_id if r else None,
                "error": a.error or ((r.error or r.limit) if r else None),
            }
        )
    return rows
