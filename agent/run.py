"""`solve()`: one bundled-agent attempt at a task on a workspace, test-first, through the skillbank MCP server.

The harness runs the tests once, searches skills with the task and the first failure, and puts them in the
prompt with their provenance. The model then loops (run_tests, read, search_skills, apply_patch, rerun) under
the usage limits. The outcome comes from the last test run (rerun by the harness when a patch landed after it),
and the trajectory is closed with it and with the skills the final answer names as applied (`Used skills: ...`),
kept only when the model was shown them: only those skills' confidence moves with the outcome. A hit limit, a
timeout, a model error or the server going away end the run as a `failure` that names the cause (`limit`,
`error`); they are results, not exceptions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field
from pydantic_ai import Agent
from pydantic_ai.exceptions import AgentRunError, ModelAPIError, UsageLimitExceeded
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage, UsageLimits

from agent.prompt import instructions, skill_query, used_skills, user_prompt
from agent.server import ServerCommand, model_tools, skillbank_toolset
from agent.session import Progress, ServerLost, Session
from agent.tree import is_git_repo, snapshot, tree_diff
from agent.workspace_tools import workspace_toolset
from skills_store.search.relevance import suggest_threshold

#: Skills put in the prompt: at most this many, each reaching the suggestion threshold (`suggest_threshold`).
PROMPT_SKILLS = 3
#: Slips the model is told about and may make again before the run ends as a `failure` with an error: per run, an
#: empty or unusable final reply; per tool name, a call of a tool that does not exist or with arguments that do not
#: fit its schema (the count of a real tool starts over at its next good call). pydantic-ai's default of 1 ended a
#: run at a small model's second misnamed tool or empty reply, whatever budget it had left.
MODEL_RETRIES = 5


class Limits(BaseModel):
    """When a run must stop; hitting one ends it as a `failure` naming the limit."""

    max_requests: int | None = Field(default=50, ge=1)
    """Model requests per run."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Input plus output tokens per run."""
    timeout_s: float | None = Field(default=None, gt=0)
    """Wall clock for the whole run, tests included."""


class TestsSummary(BaseModel):
    status: str
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0


class AgentRunResult(BaseModel):
    """What one attempt did. Stable: the eval harness and `--json` read these fields."""

    outcome: Literal["success", "failure"]
    reward: float
    """The last `run_tests` reward (0.0 when the tests never ran)."""
    tests: TestsSummary | None
    tokens: int
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int
    wall_s: float
    trajectory_id: str | None
    final_diff: str
    """What the attempt changed, as a `-p1` unified diff (empty when the workspace is not a git repo)."""
    limit: Literal["max_requests", "max_tokens", "timeout"] | None = None
    error: str | None = None
    """A model or connection error that ended the run."""
    message: str = ""
    """The model's final answer, or why the run stopped."""
    skills_shown: list[str] = Field(default_factory=list)
    used_skills: list[str] = Field(default_factory=list)
    """The skills the final answer says were applied, among those the model was shown; recorded as `used_skills`,
    so only these skills' confidence moves with the outcome."""


def _tests(run: dict[str, Any] | None) -> TestsSummary | None:
    if not run:
        return None
    return TestsSummary(**{k: run.get(k, 0) for k in ("total", "passed", "failed", "errors")}, status=run["status"])


async def _thought(session: Session, node: Any) -> None:
    response = node.model_response
    text = "\n".join(p.content for p in response.parts if getattr(p, "part_kind", "") == "text" and p.content)
    calls = [p.tool_name for p in response.parts if getattr(p, "part_kind", "") == "tool-call"]
    usage = response.usage
    if text:
        session.say(f"model: {' '.join(text.split())[:160]}")
    step = {"kind": "thought", "content": text or f"(calls {', '.join(calls)})", "tokens_in": usage.input_tokens,
            "tokens_out": usage.output_tokens}  # fmt: skip
    await session.record([step])


async def _loop(agent: Agent[None, str], prompt: str, limits: Limits, stream: bool, session: Session, box: dict):
    usage_limits = UsageLimits(request_limit=limits.max_requests, total_tokens_limit=limits.max_tokens)
    async with agent.iter(prompt, usage_limits=usage_limits) as run:
        box["run"] = run
        async for node in run:
            if Agent.is_model_request_node(node) and stream:
                async with node.stream(run.ctx) as events:
                    async for _ in events:
                        pass
            elif Agent.is_call_tools_node(node):
                await _thought(session, node)
                u = run.usage
                session.say(f"tokens {u.total_tokens} ({u.requests} requests)")
        box["output"] = run.result.output if run.result is not None else ""


async def solve(
    task: str,
    workspace: Path,
    model: Model,
    *,
    use_skills: bool = True,
    limits: Limits | None = None,
    server: ServerCommand | None = None,
    progress: Progress | None = None,
    stream: bool = False,
    tests: list[str] | None = None,
    server_log: Path | None = None,
    label: str | None = None,
    on_connected: Callable[[], None] | None = None,
) -> AgentRunResult:
    """One attempt at `task` in `workspace` (edited in place) with `model`; see the module doc.

    `server` starts skillbank (default: the installed `skillbank` with this process's environment, so the same
    `SKILLBANK_HOME`); `tests` restricts the harness's test runs (default: the whole suite); `progress` gets one
    line per tool call and per model turn; `stream` uses streaming model requests; `label` (e.g. "candidate 2/3")
    is noted in the trajectory; `on_connected` is called once the server has answered the first calls (its
    stores are open then).
    """
    limits = limits or Limits()
    workspace = workspace.resolve()
    started = time.monotonic()
    before = snapshot(workspace) if is_git_repo(workspace) else None
    server = server or ServerCommand.default()
    session: Session
    box: dict[str, Any] = {}
    limit: Literal["max_requests", "max_tokens", "timeout"] | None = None
    error: str | None = None
    lost = False

    async def on_workspace_call(tool: str, args: dict[str, object], summary: str) -> None:
        await session.workspace_call(tool, dict(args), summary)

    toolset = skillbank_toolset(server, workspace, use_skills=use_skills, log_file=server_log,
                                process_tool_call=lambda *a: session.process_tool_call(*a))  # fmt: skip
    session = Session(toolset, progress, {"tests": tests} if tests else {})
    async with toolset:
        with anyio.move_on_after(limits.timeout_s or math.inf) as scope:
            try:
                first = await session.run_tests()
                skills: list[dict[str, Any]] = []
                if use_skills:
                    found = await session.try_call("search_skills", {"query": skill_query(task, first), "k": 5})
                    hits = found.get("skills", []) if isinstance(found, dict) else []
                    cut = suggest_threshold(server.env)  # the cut of run_tests' suggestions
                    skills = [s for s in hits if float(s.get("relevance", 1.0)) >= cut][:PROMPT_SKILLS]
                session.shown(skills, to_model=True)
                shown = ", ".join(s["skill_id"] for s in skills) or "none"
                note = f"{label}; skills in the prompt: {shown}" if label else f"skills in the prompt: {shown}"
                await session.record([{"kind": "message", "content": note}], task=task)
                if on_connected is not None:
                    on_connected()
                agent: Agent[None, str] = Agent(
                    model,
                    instructions=instructions(use_skills),
                    retries={"tools": MODEL_RETRIES, "output": MODEL_RETRIES},
                    toolsets=[
                        model_tools(toolset, use_skills=use_skills),
                        workspace_toolset(workspace, on_workspace_call),
                    ],
                )
                await _loop(agent, user_prompt(task, first, skills), limits, stream, session, box)
            except UsageLimitExceeded as exc:
                limit = "max_requests" if "request_limit" in str(exc) else "max_tokens"
            except (ModelAPIError, AgentRunError) as exc:
                error = f"{type(exc).__name__}: {exc}"
            except ServerLost as exc:
                lost = True
                error = f"ServerLost: {exc}"
        if scope.cancelled_caught:
            limit = "timeout"
        if not lost and limit != "timeout" and (session.last_run is None or session.patched_since_run):
            try:
                await session.run_tests()
            except ServerLost as exc:
                lost = True
                error = error or f"ServerLost: {exc}"
        last = session.last_run
        passed = last is not None and last.get("status") == "passed" and not session.patched_since_run
        outcome: Literal["success", "failure"] = "success" if passed and limit is None and error is None else "failure"
        reasons = {"max_requests": f"stopped: the request limit ({limits.max_requests}) was reached",
                   "max_tokens": f"stopped: the token limit ({limits.max_tokens}) was reached",
                   "timeout": f"stopped: the timeout ({limits.timeout_s} s) was reached"}  # fmt: skip
        message = reasons[limit] if limit else (f"stopped: {error}" if error else str(box.get("output", "")))
        used = used_skills(message, session.shown_to_model) if limit is None and error is None else []
        if used:
            session.say(f"used skills: {', '.join(used)}")
        with anyio.CancelScope(shield=True):
            if not lost:  # a lost server can record nothing more: its trajectory stays as it last wrote it
                try:
                    await session.record([{"kind": "message", "content": message}], task=task, outcome=outcome,
                                         final=True, used_skills=used or None)  # fmt: skip
                except ServerLost as exc:
                    error = error or f"ServerLost: {exc}"
    usage: RunUsage = box["run"].usage if "run" in box else RunUsage()
    final_diff = tree_diff(workspace, before, snapshot(workspace)) if before is not None else ""
    return AgentRunResult(
        outcome=outcome,
        reward=float(((last or {}).get("reward") or {}).get("value", 0.0)),
        tests=_tests(last),
        tokens=usage.total_tokens,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        requests=usage.requests,
        tool_calls=session.tool_calls,
        wall_s=round(time.monotonic() - started, 3),
        trajectory_id=session.trajectory_id,
        final_diff=final_diff,
        limit=limit,
        error=error,
        message=message,
        skills_shown=session.skills_shown,
        used_skills=used,
    )
