"""`CloseNotifier`: runs the on_close callbacks of closed trajectories in one worker thread, off the event loop.

Moving a skill's confidence or distilling a closed trajectory must not hold up the tool call that closed it; one
worker runs them in order, a failing callback is logged and the others still run, and `flush` waits for what is
queued (tests, shutdown).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait

import anyio

from skills_store.models import Trajectory
from skills_store.protocols import TrajectoryStore

log = logging.getLogger(__name__)


class CloseNotifier:
    def __init__(self, store: TrajectoryStore, callbacks: list[Callable[[Trajectory], None]] | None = None) -> None:
        self.store = store
        self.callbacks: list[Callable[[Trajectory], None]] = list(callbacks or [])
        """Called with each trajectory, steps included, once it closes."""
        self._executor: ThreadPoolExecutor | None = None
        self._pending: set[Future[None]] = set()

    def notify(self, trajectory_ids: Sequence[str]) -> None:
        """Queue the callbacks for these (closed) trajectories; returns at once."""
        if not trajectory_ids or not self.callbacks:
            return
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillbank-on-close")
        future = self._executor.submit(self._run, list(trajectory_ids))
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    def _run(self, trajectory_ids: list[str]) -> None:
        for tid in trajectory_ids:
            try:
                traj = self.store.get(tid)
            except Exception:
                log.exception("reading closed trajectory %s for on_close callbacks failed", tid)
                continue
            for callback in self.callbacks:
                try:
                    callback(traj)
                except Exception:
                    log.exception("on_close callback %r failed for trajectory %s", callback, tid)

    async def flush(self) -> None:
        """Wait until every callback queued so far has run."""
        pending = list(self._pending)
        if pending:
            await anyio.to_thread.run_sync(lambda: wait(pending))

    async def shutdown(self) -> None:
        """Run what is queued, then stop the worker (a later `notify` starts a new one)."""
        await self.flush()
        if self._executor is not None:
            executor, self._executor = self._executor, None
            await anyio.to_thread.run_sync(executor.shutdown)
