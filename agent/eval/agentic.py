"""`AgenticSolver`: one attempt is one run of the bundled agent (`agent.run.solve`) on the fresh copy.

The agent talks to a skillbank MCP server spawned for the copy with the eval's data dir as `SKILLBANK_HOME`, so
the server records the trajectory and serves the eval's skills; `use_skills=False` is the agent's own ablation
(no `search_skills`, no suggested skills). The harness then grades the agent's final diff on another copy.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agent.eval.solver import SolveContext, SolveResult

if TYPE_CHECKING:
    from pydantic_ai.models import Model


class AgenticSolver:
    name = "agentic"
    records_trajectories = True

    def __init__(
        self,
        model: Model,
        home: Path,
        *,
        embedder: str,
        test_python: str | None,
        max_requests: int = 30,
        timeout_s: float = 600,
        env: Mapping[str, str] | None = None,
    ) -> None:
        from agent.run import Limits
        from agent.server import ServerCommand, absolute_program

        self.model = model
        self.limits = Limits(max_requests=max_requests, timeout_s=timeout_s)
        server_env = dict(os.environ if env is None else env)
        # Absolute: the server runs in the task's copy, where a relative `--out ev` would record into `<copy>/ev/home`.
        server_env |= {"SKILLBANK_HOME": str(home.expanduser().absolute()), "SKILLBANK_EMBEDDER": embedder,
                       "SKILLBANK_STARTER_SKILLS": "false"}  # fmt: skip
        if test_python:
            server_env["SKILLBANK_TEST_PYTHON"] = absolute_program(test_python)
        self.server = ServerCommand.default(server_env)

    def solve(self, ctx: SolveContext) -> SolveResult:
        import anyio

        from agent.eval.records import error_class, is_api_error
        from agent.run import solve
        from agent.tree import init_repo, is_git_repo, snapshot

        if not is_git_repo(ctx.workspace):
            init_repo(ctx.workspace)
            snapshot(ctx.workspace)
        task = f"Task {ctx.task.task.task_id}:\n{ctx.task.task.problem_statement}"

        async def run():  # type: ignore[no-untyped-def]
            return await solve(
                task,
                ctx.workspace,
                self.model,
                use_skills=ctx.use_skills,
                limits=self.limits,
                server=self.server,
                label=f"eval {ctx.phase} attempt {ctx.attempt}",
            )

        outcome = anyio.run(run)
        # The skillbank server dying under the run cut the model off: what it had changed so far is no candidate,
        # and the attempt is the machine's failure (a rerun redoes it), not the model's.
        lost = error_class(outcome.error) == "ServerLost"
        return SolveResult(
            patch="" if lost else outcome.final_diff,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
            requests=outcome.requests,
            # A run the model's API ended before any change proposed no candidate: `solver_error`, not a failure
            # of the model (pydantic-ai's errors of the model itself, a tool retried too often, are its own).
            candidates=0 if lost or (is_api_error(outcome.error) and not outcome.final_diff.strip()) else 1,
            best_reward=outcome.reward,
            skills_shown=list(outcome.skills_shown),
            trajectory_id=outcome.trajectory_id,
            error=outcome.error,
        )

    def close(self) -> None:
        return None
