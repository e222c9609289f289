"""`OneShotSolver`: Agentless-style repair, the candidate -> evaluate -> reward loop, with pydantic-ai directly.

One prompt holds the failing test output, the relevant file(s) and (with skills) the retrieved skills. N answers
are sampled from it; each becomes a patch, is applied to its own fresh copy of the broken tree and scored by the
`run_tests` reward over the whole suite (the tests the user can run anyway); the best is kept (ties: the smaller
diff). No tool calls, so it works with models too weak for an agent loop.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.eval.context import failures_block, files_block, skills_block
from agent.eval.edits import answer_to_patch, drop_test_files
from agent.eval.solver import SolveContext, SolveResult
from agent.tasks.files import copy_repo
from agent.tasks.grading import run_graded, runner_config
from sandbox.errors import SandboxError
from sandbox.patch import apply_patch
from sandbox.testing.runner import failure_queries, run_tests
from skills_store.models import Skill

if TYPE_CHECKING:
    from pydantic_ai.models import Model

INSTRUCTIONS = """\
You fix bugs in Python projects. You are given a task, the output of the failing tests, the relevant source files \
and sometimes lessons from earlier sessions. Find the bug in the source code and fix it; never change the tests.

Answer with SEARCH/REPLACE blocks. Each block names the file, then copies a few lines of it exactly, then gives the \
lines that replace them. For example, if `shop/cart.py` had the bug `return price * qty + 1`, the answer would be:

shop/cart.py
<<<<<<< SEARCH
def total(price, qty):
    return price * qty + 1
=======
def total(price, qty):
    return price * qty
>>>>>>> REPLACE

Use the real path of the file that holds the bug and copy its lines exactly."""
"""A worked example rather than a template: given `path/to/file.py` and placeholder lines, Qwen2.5-Coder 1.5B
copied the template back as its answer on every task of a first run (20/20 training attempts without a patch)."""

SkillLookup = Callable[[list[str]], list[Skill]]


@dataclass
class OneShotConfig:
    candidates: int = 3
    """N: answers sampled per attempt."""
    temperature: float = 0.8
    """Sampling temperature when N > 1 (a single candidate is sampled at 0)."""
    timeout_s: int = 300
    test_python: str | None = None
    file_budget: int = 24_000
    """Characters of source the prompt may hold."""
    max_output_tokens: int = 2048


def build_prompt(ctx: SolveContext, failures: list[Any], skills: list[Skill], budget: int) -> str:
    parts = [
        f"Task {ctx.task.task.task_id}:\n{ctx.task.task.problem_statement}",
        f"Failing tests:\n```\n{failures_block(failures)}\n```",
        f"Relevant files:\n\n{files_block(ctx.workspace, ctx.task, failures, budget)}",
    ]
    block = skills_block(skills)
    if block:
        parts.append(block)
    parts.append("Now answer with the SEARCH/REPLACE block(s) that fix the bug.")
    return "\n\n".join(parts)


class OneShotSolver:
    name = "oneshot"
    records_trajectories = False

    def __init__(self, model: Model, config: OneShotConfig, skills: SkillLookup | None = None) -> None:
        self.model = model
        self.config = config
        self.skills = skills
        self._loop = asyncio.Runner()
        """One event loop for every request of the eval, so the model's HTTP client stays on one loop."""

    def solve(self, ctx: SolveContext) -> SolveResult:
        from pydantic_ai import Agent
        from pydantic_ai.exceptions import AgentRunError, ModelAPIError, UsageLimitExceeded
        from pydantic_ai.settings import ModelSettings

        cfg = self.config
        broken = run_graded(ctx.workspace, ctx.task, timeout_s=cfg.timeout_s, test_python=cfg.test_python)
        failures = [case for case in broken.tests if case.outcome in ("failed", "error")]
        skills = self.skills(failure_queries(broken)) if ctx.use_skills and self.skills else []
        prompt = build_prompt(ctx, failures, skills, cfg.file_budget)
        agent: Agent[None, str] = Agent(self.model, instructions=INSTRUCTIONS, output_type=str)
        result = SolveResult(
            skills_shown=[s.skill_id for s in skills],
            failing_output=[{"id": c.id, "message": c.message or ""} for c in failures],
        )
        best: tuple[float, int, str] | None = None
        scores: dict[str, float] = {}
        for i in range(cfg.candidates):
            settings = ModelSettings(
                temperature=cfg.temperature if cfg.candidates > 1 else 0.0,
                seed=ctx.seed * 10_000 + ctx.attempt * 100 + i,
                max_tokens=cfg.max_output_tokens,
            )
            try:
                run = self._loop.run(agent.run(prompt, model_settings=settings))
            except (ModelAPIError, AgentRunError, UsageLimitExceeded) as exc:
                result.error = f"{type(exc).__name__}: {exc}"[:500]
                continue
            result.candidates += 1
            result.requests += run.usage.requests
            result.input_tokens += run.usage.input_tokens
            result.output_tokens += run.usage.output_tokens
            result.cost_usd = _add_cost(result.cost_usd, run)
            patch = drop_test_files(answer_to_patch(run.output, ctx.workspace))
            if patch not in scores:
                # With one candidate there is nothing to choose, so it is not scored (the harness grades it).
                scores[patch] = self._score(ctx, patch) if patch.strip() and cfg.candidates > 1 else 0.0
            reward = scores[patch]
            if best is None or (reward, -len(patch)) > (best[0], -best[1]):
                best = (reward, len(patch), patch)
        if best is not None:
            result.best_reward, _, result.patch = best
        return result

    def _score(self, ctx: SolveContext, patch: str) -> float:
        """The run_tests reward of the whole suite with `patch` applied to a fresh copy (0 if it does not apply)."""
        with tempfile.TemporaryDirectory(prefix="sb-cand-") as tmp:
            ws = copy_repo(ctx.task.repo, Path(tmp) / "repo")
            try:
                apply_patch(ws, patch)
            except SandboxError:
                return 0.0
            run = run_tests(ws, timeout_s=self.config.timeout_s, backend="local",
                            config=runner_config(self.config.test_python))  # fmt: skip
            return run.reward.value

    def close(self) -> None:
        self._loop.close()


def _add_cost(total: float | None, run: Any) -> float | None:
    """Known prices only (genai-prices); unknown models leave the cost unknown rather than zero."""
    try:
        price = float(run.response.cost().total_price)
    except (LookupError, AttributeError, TypeError, ValueError):
        return total
    return price if total is None else total + price
