"""`SessionTable`: which trajectory each MCP session writes to, and when a session's trajectory is closed.

A session is keyed by `session_key.session_identity`: where the transport tells two clients apart its key is used;
where it does not, each request is its own session. A session's trajectory is created on its first call and closed
by the server when the session ends: its connection closes (stdio pipe closed, HTTP session deleted or expired),
`idle_close_s` passes without a call where the protocol has no connection, its stateless request ends, or the
server shuts down. Trajectories left open by a crashed server are closed as `abandoned` after `stale_after`.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

import anyio
from mcp.server.mcpserver import Context

from mcp_server.close_notifier import CloseNotifier
from mcp_server.session_key import session_identity
from skills_store.protocols import TrajectoryStore
from skills_store.trajectories.closing import close_with_inferred_outcome

log = logging.getLogger(__name__)

#: How many sessions' last closed trajectory are remembered (a second `final=true` answers with it).
CLOSED_MEMORY = 4096


@dataclass
class _Session:
    key: str
    trajectory_id: str
    last_seen: float
    ends_with_connection: bool


class SessionTable:
    def __init__(
        self,
        store: TrajectoryStore,
        closer: CloseNotifier,
        *,
        workspace: str | None = None,
        repo: str | None = None,
        idle_close_s: float = 1800.0,
        stale_after: timedelta = timedelta(hours=24),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._closer = closer
        self.workspace = workspace
        self.repo = repo
        self.idle_close_s = idle_close_s
        self.stale_after = stale_after
        self._sessions: dict[str, _Session] = {}
        self._by_trajectory: dict[str, _Session] = {}
        self._closed: OrderedDict[str, tuple[str, str | None]] = OrderedDict()
        """session key -> the trajectory its last `final=true` closed, and that call's fingerprint."""
        self._closing_calls: OrderedDict[str, str] = OrderedDict()
        """trajectory id -> the fingerprint of the `final=true` call that closed it (a retry by id sends the same)."""
        self._lock: anyio.Lock | None = None
        self._clock = clock
        self._last_reap = clock()
        self._stale_checked = False

    def __contains__(self, key: str) -> bool:
        """Whether the session with this key has an open trajectory."""
        return key in self._sessions

    async def trajectory_id(self, ctx: Context) -> str:
        """This MCP session's open trajectory, created on first use."""
        identity = session_identity(ctx)
        now = self._clock()
        await self._reap(now)
        session = self._sessions.get(identity.key)
        if session is None:
            if self._lock is None:
                self._lock = anyio.Lock()
            async with self._lock:
                session = self._sessions.get(identity.key)
                if session is None:
                    traj = await anyio.to_thread.run_sync(
                        lambda: self.store.create(source=identity.source, workspace=self.workspace, repo=self.repo)
                    )
                    session = _Session(identity.key, traj.trajectory_id, now, identity.connection is not None)
                    self._sessions[identity.key] = session
                    self._by_trajectory[session.trajectory_id] = session
                    if identity.connection is not None and not identity.connection.state.get("skillbank.ends"):
                        identity.connection.state["skillbank.ends"] = True
                        identity.connection.exit_stack.push_async_callback(self.end, identity.key)
        session.last_seen = now
        return session.trajectory_id

    def touch(self, trajectory_id: str) -> None:
        """A call wrote to this trajectory by its id: the session it belongs to, if any, is not idle."""
        session = self._by_trajectory.get(trajectory_id)
        if session is not None:
            session.last_seen = self._clock()

    async def end(self, key: str, reason: str = "the client disconnected") -> None:
        """The session ended: its trajectory is closed with an inferred outcome (when it is still open)."""
        session = self._sessions.pop(key, None)
        if session is not None:
            self._by_trajectory.pop(session.trajectory_id, None)
            await self._finish([session.trajectory_id], reason)

    def forget(self, trajectory_id: str) -> str | None:
        """Detach a closed trajectory from its session (the next call starts a new one); returns the session key."""
        session = self._by_trajectory.pop(trajectory_id, None)
        if session is None:
            return None
        if self._sessions.get(session.key) is session:
            del self._sessions[session.key]
        return session.key

    def remember_closed(self, key: str | None, trajectory_id: str, fingerprint: str | None = None) -> None:
        """This session closed this trajectory (`final=true`): a repeated close, or a retry of the closing call (the
        same `fingerprint`), is answered with it."""
        if fingerprint is not None:
            self._closing_calls[trajectory_id] = fingerprint
            self._closing_calls.move_to_end(trajectory_id)
            while len(self._closing_calls) > CLOSED_MEMORY:
                self._closing_calls.popitem(last=False)
        if key is None:
            return
        self._closed[key] = (trajectory_id, fingerprint)
        self._closed.move_to_end(key)
        while len(self._closed) > CLOSED_MEMORY:
            self._closed.popitem(last=False)

    def closed_by(self, trajectory_id: str, fingerprint: str) -> bool:
        """Whether this server closed this trajectory with a call of this fingerprint (a retry names it by its id)."""
        return self._closing_calls.get(trajectory_id) == fingerprint

    def last_closed(self, key: str, fingerprint: str | None = None) -> str | None:
        """The trajectory this session closed last, when it has none open now; with `fingerprint`, only when the
        call that closed it had that fingerprint (a client's retry of it)."""
        if key in self._sessions or key not in self._closed:
            return None
        trajectory_id, closed_by = self._closed[key]
        if fingerprint is not None and fingerprint != closed_by:
            return None
        return trajectory_id

    async def reap_idle(self) -> None:
        """Close the sessions idle for `idle_close_s` (the server calls this periodically, not only on calls)."""
        await self._reap(self._clock())

    async def _reap(self, now: float) -> None:
        if not self._stale_checked:
            self._stale_checked = True
            try:
                stale = await anyio.to_thread.run_sync(lambda: self.store.close_stale(self.stale_after))
            except Exception:
                log.exception("closing stale trajectories failed")
            else:
                self._closer.notify(stale)
        if now - self._last_reap < min(60.0, self.idle_close_s):
            return
        self._last_reap = now
        idle = [
            key
            for key, s in self._sessions.items()
            if not s.ends_with_connection and now - s.last_seen >= self.idle_close_s
        ]
        for key in idle:
            await self.end(key, f"idle for {self.idle_close_s:.0f} s")

    async def end_all(self, reason: str) -> None:
        """Close every open session's trajectory, inline (server shutdown: nothing else is served)."""
        sessions, self._sessions = self._sessions, {}
        self._by_trajectory = {}
        await self._finish([s.trajectory_id for s in sessions.values()], reason, inline=True)

    async def _finish(self, trajectory_ids: Sequence[str], reason: str, *, inline: bool = False) -> None:
        """Close these trajectories; `inline` skips the thread hop."""

        def work() -> list[str]:
            closed = []
            for tid in trajectory_ids:
                if close_with_inferred_outcome(self.store, tid, f"session ended ({reason}) without final=true"):
                    closed.append(tid)
            return closed

        with anyio.CancelScope(shield=True):
            try:
                closed = work() if inline else await anyio.to_thread.run_sync(work)
            except Exception:
                log.exception("closing trajectories %s failed", list(trajectory_ids))
                return
        self._closer.notify(closed)
