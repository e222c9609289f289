"""`SessionCapture`: every MCP session becomes a trajectory, and every tool call in it a step, with no action
from the agent.

Tool adapters wrap their work in `async with capture.tool_call(ctx, tool, args) as call:` and set the fields of
the `CallRecord`; the step (tool, redacted arguments, redacted result summary, ok, duration, error text) is
committed before the tool's result goes back to the client. `record_trajectory` goes through `record()`.

A session that ends without `final=true` is closed by the server: its outcome is the one the agent set, else
inferred from the last `run_tests` reward (1.0 -> success, otherwise failure), else `abandoned`; a last
observation step says so. When a session ends, and which trajectory it writes to, is `sessions.SessionTable`'s.

Sessions never mix (`session_key`): where the transport tells two clients apart its key is used; where it does
not, each request is its own session, and a trajectory is written to again only through the id the server
returned.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from typing import Any

import anyio
from mcp.server.mcpserver import Context

from mcp_server.call_record import CallRecord, call_step
from mcp_server.capture_text import ANSWER_TIMEOUT_S, CapturedArgs
from mcp_server.close_notifier import CloseNotifier
from mcp_server.keyed_locks import KeyedLocks
from mcp_server.recording import RecordResult, check_batch, closing_fingerprint, used_skills_step
from mcp_server.redact_worker import RedactWorker
from mcp_server.session_key import session_identity
from mcp_server.sessions import SessionTable
from skills_store.errors import InvalidInput
from skills_store.models import (
    Outcome,
    Step,
    Trajectory,
    TrajectoryStatus,
    utcnow,
)
from skills_store.protocols import TrajectoryStore
from skills_store.redact import Redactor

log = logging.getLogger(__name__)


class _Closed(InvalidInput):
    """The trajectory a `record_trajectory` call would write to is closed."""


#: Tools whose captured step is committed without an fsync (see `SQLiteTrajectoryStore.append`'s `durable`): it
#: survives a crash of the server, and reaches the disk with the next durable commit. A search changes nothing, and
#: a patch's files are written without an fsync themselves (an fsynced step could outlive, after a power cut, the
#: change it records); a test run's step carries the reward that closes the session, and is fsynced.
UNSYNCED_TOOLS = frozenset({"search_skills", "apply_patch"})
#: Tools whose step is committed from the event loop when no other write is in the way: no thread hop there and
#: back (an unsynced commit of a bounded step: ~0.1 ms for a search, ~0.3 ms for a release diff's patch). Through
#: MCP on the 8 release diffs of `bench.patch_mcp`, two servers alternating, 10 rounds: 159.4 -> 157.6 ms a round.
LOOP_COMMITTED_TOOLS = frozenset({"search_skills", "apply_patch"})


class SessionCapture:
    def __init__(
        self,
        store: TrajectoryStore,
        redactor: Redactor,
        *,
        workspace: str | None = None,
        repo: str | None = None,
        on_close: list[Callable[[Trajectory], None]] | None = None,
        idle_close_s: float = 1800.0,
        stale_after: timedelta = timedelta(hours=24),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.redactor = redactor
        self._redact_worker = RedactWorker(redactor) if redactor.spec is not None else None
        self._closer = CloseNotifier(store, on_close)
        self._order = KeyedLocks()
        self.sessions = SessionTable(
            store, self._closer, workspace=workspace, repo=repo, idle_close_s=idle_close_s, stale_after=stale_after,
            clock=clock,
        )  # fmt: skip

    async def trajectory_id(self, ctx: Context) -> str:
        """This MCP session's open trajectory, created on first use."""
        return await self.sessions.trajectory_id(ctx)

    async def reap_idle(self) -> None:
        """Close the sessions idle for `idle_close_s` (the server calls this periodically, not only on calls)."""
        await self.sessions.reap_idle()

    # -- capture -------------------------------------------------------------------------------------------

    def tool_call(self, ctx: Context, tool: str, args: dict[str, Any]) -> AbstractAsyncContextManager[CallRecord]:
        """Record one tool call of this session when the block exits (an exception is recorded, then re-raised)."""
        return self._tool_call(ctx, tool, args)

    @asynccontextmanager
    async def _tool_call(self, ctx: Context, tool: str, args: dict[str, Any]) -> AsyncIterator[CallRecord]:
        record = CallRecord()
        started_at = utcnow()
        t0 = time.perf_counter()
        error: str | None = None
        early = CapturedArgs(self.redactor, self._redact_worker, args)
        try:
            yield record
        except BaseException as exc:
            record.ok = False
            if isinstance(exc, anyio.get_cancelled_exc_class()):  # its text names the server's tasks and files
                error = "cancelled: the client cancelled the call or went away"
            else:
                error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    duration = time.perf_counter() - t0
                    await self._save_call(ctx, tool, early, record, started_at, duration, error)
                except Exception:
                    log.exception("capturing the %s call failed; the tool's result is unaffected", tool)

    async def _save_call(
        self, ctx: Context, tool: str, args: CapturedArgs, record: CallRecord, started_at, duration: float, error
    ) -> None:
        built: list[Step] = []

        def step(wait_s: float = ANSWER_TIMEOUT_S) -> Step:
            if not built:  # built once: a step refused on the event loop is not redacted again
                built.append(call_step(
                    self.redactor, tool, args, record, started_at=started_at, duration_s=duration, error=error,
                    wait_s=wait_s,
                ))  # fmt: skip
            return built[0]

        def write(tid: str) -> None:
            # One commit for the step and the skills it showed; a search's or a patch's without an fsync (it is on the
            # response path; the step survives a crash of the server and reaches the disk with the next commit).
            self.store.append(tid, [step()], shown_skills=record.skills_shown, durable=tool not in UNSYNCED_TOOLS)
            if record.reward is not None:
                self.store.update(tid, reward=record.reward)

        tid = await self.sessions.trajectory_id(ctx)
        try:
            # On the event loop nothing waits for the worker (wait_s=0): its answer is taken only if it is there.
            if not (tool in LOOP_COMMITTED_TOOLS and self._write_now(tid, step(0.0), record)):
                await anyio.to_thread.run_sync(write, tid)
        except InvalidInput:
            # The trajectory was closed behind the session's back (record_trajectory with its id, close_stale):
            # the session goes on in a new trajectory.
            self.sessions.forget(tid)
            await anyio.to_thread.run_sync(write, await self.sessions.trajectory_id(ctx))
        identity = session_identity(ctx)
        if identity.per_request:  # nothing can continue this trajectory: it ends with its request
            await self.sessions.end(identity.key, "the request ended; stateless HTTP without X-Skillbank-Session")

    def _write_now(self, tid: str, step: Step, record: CallRecord) -> bool:
        """A `LOOP_COMMITTED_TOOLS` call's step committed from the event loop when no other write is in the way (no
        fsync, no thread hop: ~0.2 ms less on every search); False, nothing written, when it would have to wait."""
        if record.reward is not None:
            return False
        total = self.store.try_append(tid, [step], shown_skills=record.skills_shown, durable=False)
        return total is not None

    async def _target(
        self, ctx: Context, trajectory_id: str | None, *, only_closing: bool, outcome: Outcome | None
    ) -> str | RecordResult:
        """The trajectory a `record_trajectory` call writes to, or the answer to a repeated close.

        An explicit id is the caller's (the id the server returned; ids are random). Without one, a call that only
        closes again (`final=true`, nothing to record, after this session closed one) must not open a new, empty
        trajectory just to close it: it is answered with the trajectory this session closed last.
        """
        if trajectory_id is not None:
            self.sessions.touch(trajectory_id)
            return trajectory_id
        if only_closing:
            identity = session_identity(ctx)
            if identity.per_request:
                raise InvalidInput(
                    "nothing to close: without a session (stateless HTTP and no X-Skillbank-Session header) each "
                    "request stands alone; pass the trajectory_id your first record_trajectory call returned"
                )
            last = self.sessions.last_closed(identity.key)
            if last is not None:
                return await self._closed_again(last, outcome)
        return await self.sessions.trajectory_id(ctx)

    async def _closed_again(self, trajectory_id: str, outcome: Outcome | None) -> RecordResult:
        """The answer to closing a trajectory that is closed: it, as it is; refused when the call asks for another
        outcome than the one it closed with (that outcome has already moved the confidence of the skills it used)."""

        def read() -> RecordResult:
            closed = self.store.get(trajectory_id, with_steps=False)
            if outcome is not None and closed.outcome != outcome:
                raise InvalidInput(
                    f"trajectory {trajectory_id!r} is already closed with outcome {closed.outcome!r}; a closed "
                    f"trajectory's outcome does not change (it has already counted for the skills it used), so "
                    f"{outcome!r} was not recorded"
                )
            total = self.store.step_count(trajectory_id)
            return RecordResult(trajectory_id=trajectory_id, steps_recorded=0, total_steps=total, status="closed")

        return await anyio.to_thread.run_sync(read)

    async def record(
        self,
        ctx: Context,
        steps: Sequence[Step],
        *,
        task: str | None = None,
        outcome: Outcome | None = None,
        final: bool = False,
        trajectory_id: str | None = None,
        used_skills: Sequence[str] | None = None,
    ) -> RecordResult:
        """`record_trajectory`: append the agent's steps, set task and outcome, close on `final`.

        `used_skills` (the skills the agent says it applied) is stored as a step of its own, a `tool_call` of
        `record_trajectory` whose result is a `RecordSummary`; `summaries.used_skills(trajectory)` reads it back.
        Calls to one trajectory (by its id, or this session's) are stored in the order they arrived.
        """
        check_batch(steps)
        async with self._order.hold(trajectory_id or session_identity(ctx).key):
            return await self._record(ctx, steps, task, outcome, final, trajectory_id, used_skills)

    async def _record(
        self,
        ctx: Context,
        steps: Sequence[Step],
        task: str | None,
        outcome: Outcome | None,
        final: bool,
        trajectory_id: str | None,
        used_skills: Sequence[str] | None,
    ) -> RecordResult:
        red = self.redactor
        only_closing = final and not steps and not task and not used_skills
        identity = session_identity(ctx)
        creates = trajectory_id is None and identity.key not in self.sessions

        named = list(dict.fromkeys(used_skills or ()))
        fingerprint = closing_fingerprint(steps, task, outcome, named) if final else None
        if fingerprint is not None and trajectory_id is None and not only_closing and not identity.per_request:
            retried = self.sessions.last_closed(identity.key, fingerprint)
            if retried is not None:  # a retry of the call that closed it (its answer was lost): not a new trajectory
                return await self._closed_again(retried, outcome)

        def redacted(not_shown: list[str], check: bool = False) -> list[Step]:
            clean = [self._redacted_step(s) for s in steps]
            if named:
                clean.append(used_skills_step(red, named, not_shown))
            if check:
                self.store.check_steps(clean)
            return clean

        early: list[Step] | None = None
        if creates and (steps or used_skills):
            # This call creates the session's trajectory: a step the store would refuse is refused first, so that
            # the refusal leaves nothing behind, not even an empty trajectory. A new trajectory was shown nothing.
            early = await anyio.to_thread.run_sync(redacted, named, True)
        target = await self._target(ctx, trajectory_id, only_closing=only_closing, outcome=outcome)
        if isinstance(target, RecordResult):
            return target
        tid = target

        def work(tid: str) -> RecordResult:
            current = self.store.get(tid, with_steps=False)
            if current.status != "open":
                raise _Closed(
                    f"trajectory {tid!r} is closed and cannot be written to; omit trajectory_id to start a new one"
                )
            shown = set(self.store.shown_skills(tid)) if named and early is None else set()
            not_shown = [s for s in named if s not in shown]
            clean = early if early is not None else redacted(not_shown)
            total = self.store.append(tid, clean) if clean else self.store.step_count(tid)
            clean_task = red.redact_text(task) if task else None
            if clean_task or (outcome and not final):
                self.store.update(tid, task=clean_task, outcome=outcome)
            status: TrajectoryStatus = "open"
            if final:
                status = self.store.close_trajectory(tid, outcome).status
            done = len(clean)
            return RecordResult(
                trajectory_id=tid, steps_recorded=done, total_steps=total, status=status, not_shown_skills=not_shown
            )

        try:
            result = await anyio.to_thread.run_sync(work, tid)
        except _Closed:
            if trajectory_id is not None:
                # Closing it again by its id (`final=true` alone), or a retry of the very call that closed it (its
                # answer was lost on the way: a stateless HTTP client names the trajectory in every call) is
                # answered with it, as it is; anything else would write to a closed trajectory.
                if only_closing or (fingerprint is not None and self.sessions.closed_by(trajectory_id, fingerprint)):
                    return await self._closed_again(trajectory_id, outcome)
                raise
            # The session's own trajectory was closed behind its back (by its id through another connection or
            # server process, or by close-stale): the session goes on in a new one, as after its own final=true.
            self.sessions.forget(tid)
            if only_closing:  # closing it again: it is closed
                self.sessions.remember_closed(identity.key, tid)
                return await self._closed_again(tid, outcome)
            tid = await self.sessions.trajectory_id(ctx)
            result = await anyio.to_thread.run_sync(work, tid)
        if final:
            key = self.sessions.forget(tid)
            self.sessions.remember_closed(key if key is not None else identity.key, tid, fingerprint)
            self._closer.notify([tid])
        return result

    def _redacted_step(self, step: Step) -> Step:
        """An agent's step as it is stored: every text redacted, the tool's name and the keys of args and result
        included (an agent can put anything there)."""
        red = self.redactor
        return step.model_copy(
            update={
                "content": red.redact_text(step.content),
                "tool": red.redact_text(step.tool) if step.tool else step.tool,
                "args": red.redact(step.args),
                "result": red.redact(step.result),
            }
        )

    # -- on_close callbacks and shutdown ---------------------------------------------------------------------

    @property
    def on_close(self) -> list[Callable[[Trajectory], None]]:
        """Called (in a worker thread, errors logged) with each trajectory, steps included, once it closes."""
        return self._closer.callbacks

    async def flush(self) -> None:
        """Wait until every on_close callback queued so far has run."""
        await self._closer.flush()

    async def aclose(self) -> None:
        """Close every open session trajectory (see the module doc for the outcome) and run the callbacks.

        For server shutdown. The capture stays usable: a later call starts a new trajectory.
        """
        with anyio.CancelScope(shield=True):
            await self.sessions.end_all("server shutdown")
            await self._closer.shutdown()
