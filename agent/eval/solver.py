"""The solver interface the harness drives: one attempt at one task in a fresh copy of its broken tree.

Two implementations: `oneshot.OneShotSolver` (Agentless style, pydantic-ai directly) and `agentic.AgenticSolver`
(the bundled agent through the skillbank MCP server). The harness grades what they return itself, on another
fresh copy, so a solver cannot grade its own work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from agent.eval.records import Phase
from agent.tasks.model import TaskFolder


@dataclass
class SolveContext:
    task: TaskFolder
    workspace: Path
    """A fresh copy of the broken tree, the solver's to change."""
    use_skills: bool
    phase: Phase
    attempt: int
    seed: int


class SolveResult(BaseModel):
    patch: str = ""
    """The proposed fix as a -p1 diff against the broken tree ('' when there is none)."""
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cost_usd: float | None = None
    candidates: int = 0
    best_reward: float | None = None
    skills_shown: list[str] = Field(default_factory=list)
    trajectory_id: str | None = None
    """Set when the solver's session already recorded a trajectory (agentic); else the harness records one."""
    failing_output: list[dict[str, str]] = Field(default_factory=list)
    """`{"id", "message"}` of the tests that failed before the fix, for the trajectory the harness records."""
    error: str | None = None


class Solver(Protocol):
    name: str
    records_trajectories: bool
    """True when the solver's own session records trajectories into the eval's data dir."""

    def solve(self, ctx: SolveContext) -> SolveResult: ...

    def close(self) -> None: ...
