"""The `run_tests` tool: a thin adapter over `sandbox.testing.runner`, plus skills suggested for the failures."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from mcp_server.deps import Deps
from mcp_server.errors import tool_result
from mcp_server.lazy import SkillBankUnavailable
from mcp_server.tools.search import SkillHit
from mcp_server.toolset import ToolSet
from sandbox.exec.base import Cancel
from sandbox.testing.models import TestRunResult
from sandbox.testing.runner import RunnerConfig, failure_queries, run_tests
from skills_store.trajectories.summaries import TestFailure, TestRunSummary
from skills_store.truncate import truncate_text

log = logging.getLogger(__name__)

SUGGESTIONS = 3
#: How long a cancelled call waits for its run to be killed (the sandbox kills at once; this bounds a stuck kill).
KILL_WAIT_S = 5.0
T = TypeVar("T")


def render(result: TestRunResult) -> str:
    counts = ", ".join(
        f"{n} {name}"
        for name, n in (
            ("passed", result.passed),
            ("failed", result.failed),
            ("errors", result.errors),
            ("skipped", result.skipped),
            ("xfailed", result.xfailed),
            ("xpassed", result.xpassed),
        )
        if n
    )
    lines = [
        f"{result.status.upper()}: {counts or 'no tests ran'} in {result.duration_s:.1f}s "
        f"({result.backend}; reward {result.reward.value:.2f})"
    ]
    for case in result.tests:
        if case.outcome in ("failed", "error", "xpassed"):
            lines.append(f"- {case.outcome} {case.id}: {case.message or ''}".rstrip(": "))
    lines.extend(f"warning: {w}" for w in result.warnings)
    if result.suggested_skills:
        lines.append("Skills from earlier sessions that match these failures (advice, verify before acting):")
        for s in result.suggested_skills:
            lines.append(f"- [{s['skill_id']}] {s['title']}: {s['strategy']}")
    if result.status in ("error", "timeout", "no_tests") or not result.tests:
        lines.append("--- output tail ---\n" + result.output_tail[-4000:])
    return "\n".join(lines)


def register(server: ToolSet, deps: Deps) -> None:
    settings = deps.settings
    config = RunnerConfig(
        test_python=settings.test_python,
        reward_weights=settings.reward_weights,
        docker_image=settings.docker_image,
        hidden_paths=[settings.home],  # the tests never see the data dir (other sessions' trajectories)
    )

    @server.tool(
        name="run_tests",
        description=(
            "Run the workspace's tests in a sandbox (no network) and get every test's outcome, failed first, a "
            "reward, and skills from earlier sessions that match the failures. Default: the whole pytest suite."
        ),
        # Not read-only: it runs the workspace's own tests, which write what a test run writes (caches, reports).
        # It edits no source itself (that is apply_patch), a rerun adds nothing a first run did not, and the
        # sandbox hides the data dir and cuts the network where it can (docker --network none, bwrap --unshare-net).
        annotations=ToolAnnotations(
            title="Run tests",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    async def run_tests_tool(
        ctx: Context,
        tests: Annotated[
            list[str] | None, Field(max_length=200, description="pytest node ids or paths; default: the whole suite.")
        ] = None,
        command: Annotated[
            str | None, Field(max_length=4000, description="Replaces the default `python -m pytest`.")
        ] = None,
        timeout_s: Annotated[int, Field(ge=1, le=3600, description="Wall-clock limit for the run.")] = 600,
        backend: Annotated[Literal["auto", "local", "docker"], Field(description="Where to run.")] = "auto",
    ) -> Annotated[CallToolResult, TestRunResult]:
        args: dict[str, Any] = {"tests": tests, "command": command, "timeout_s": timeout_s, "backend": backend}
        async with deps.capture.tool_call(ctx, "run_tests", args) as call:
            chosen = settings.sandbox if backend == "auto" else backend
            result = await run_cancellable(
                lambda cancel: run_tests(
                    deps.workspace,
                    tests=tests,
                    command=command,
                    timeout_s=timeout_s,
                    backend=chosen,
                    config=config,
                    cancel=cancel,
                )
            )
            if result.status in ("failed", "error") and not settings.no_skills:
                result.suggested_skills = [h.model_dump(mode="json") for h in await _suggest(deps, result)]
            failed = [t for t in result.tests if t.outcome in ("failed", "error")][:20]
            call.summary = TestRunSummary(
                status=result.status,
                passed=result.passed,
                failed=result.failed,
                errors=result.errors,
                failing=[t.id for t in failed],
                # What the distiller turns into an error signature (messages are capped).
                failures=[TestFailure(id=t.id, message=truncate_text(t.message or "", 800)) for t in failed],
                backend=result.backend,
                reward=result.reward.value,
            )
            call.ok = result.status == "passed"
            call.reward = result.reward.value
            call.skills_shown = [s["skill_id"] for s in result.suggested_skills]
            return tool_result(result, render(result))


async def run_cancellable(run: Callable[[Cancel], T]) -> T:
    """`run(cancel)` in a worker thread. When this call is cancelled (the client sent `notifications/cancelled`,
    or disconnected and the server is leaving), `cancel` is set, so the sandbox kills the run and everything it
    started, and the cancellation goes through once the thread has returned (shielded, at most `KILL_WAIT_S`):
    the suite never outlives the call, and the server does not wait for it to finish (up to its `timeout_s`)."""
    finished = threading.Event()
    cancel = Cancel()

    def work() -> T:
        try:
            return run(cancel)
        finally:
            finished.set()

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        cancel.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(finished.wait, KILL_WAIT_S)
        raise
    finally:
        if finished.is_set():  # else the thread may still wait on the pipe: its two fds are left to it
            cancel.close()


async def _suggest(deps: Deps, result: TestRunResult) -> list[SkillHit]:
    queries = failure_queries(result)
    if not queries:
        return []
    try:
        bank = await deps.skills.get()
        threshold = deps.settings.suggest_threshold
        found = await anyio.to_thread.run_sync(
            lambda: bank.suggest_for_failures(queries, SUGGESTIONS, threshold=threshold)
        )
        return [SkillHit.of(h) for h in found]
    except SkillBankUnavailable:
        # The operator's problem (logged when the bank failed to open); the model only learns there are none.
        result.warnings.append("no suggested skills: the skill bank is unavailable on this server")
        return []
