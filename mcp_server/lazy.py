"""`LazySkillBank`: opens the skill bank (Chroma, the embedding model) in a daemon thread when a tool needs it.

`initialize` and `tools/list` must not wait for torch. The server calls `trigger()` once the client has
listed tools (or after a short grace period), the bank opens in a thread, and the first tool that needs it
awaits `get()`.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, TypeVar

import anyio
import anyio.lowlevel

from skills_store.errors import ConfigError

if TYPE_CHECKING:
    from skills_store.bank import SkillBank

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The interpreter's switch interval while the bank opens in its thread (see `_in_daemon_thread`).
OPENING_SWITCH_INTERVAL_S = 0.0005

#: After a failed open, the next request more than this many seconds later tries again.
RETRY_AFTER_S = 30.0


class SkillBankUnavailable(Exception):
    """The skill bank could not be opened; the message names the path and the fix."""


class LazySkillBank:
    def __init__(self, opener: Callable[[], SkillBank]) -> None:
        self._opener = opener
        self._bank: SkillBank | None = None
        self._error: BaseException | None = None
        self._triggered = anyio.Event()
        self._ready = anyio.Event()
        self._retry_lock = anyio.Lock()
        self._failed_at: float | None = None

    def trigger(self) -> None:
        """Ask for the bank to be opened (idempotent); `run()` does the work. Call from the event loop."""
        self._triggered.set()

    async def run(self, grace_s: float | None = None) -> None:
        """Open the bank once triggered (or after `grace_s` seconds). Runs in the server's task group."""
        with anyio.move_on_after(grace_s):
            await self._triggered.wait()
        try:
            await self._open()
        finally:
            self._ready.set()

    async def _open(self) -> None:
        try:
            self._bank = await _in_daemon_thread(self._opener)
            self._error = None
        except ConfigError as exc:
            log.error("skill bank unavailable: %s", exc)
            self._error = exc
        except Exception as exc:
            log.exception("skill bank failed to open")
            self._error = exc
        self._failed_at = time.monotonic() if self._bank is None else None

    async def get(self) -> SkillBank:
        self.trigger()
        await self._ready.wait()
        if self._bank is None and self._failed_at is not None and time.monotonic() - self._failed_at > RETRY_AFTER_S:
            # A passing outage (a Chroma server restarting) must not disable search until the server restarts.
            async with self._retry_lock:
                if self._bank is None and time.monotonic() - (self._failed_at or 0) > RETRY_AFTER_S:
                    await self._open()
        if self._bank is None:
            detail = str(self._error) if isinstance(self._error, ConfigError) else "see the server log"
            raise SkillBankUnavailable(f"the skill bank could not be opened: {detail}")
        return self._bank

    def get_nowait(self) -> SkillBank | None:
        return self._bank

    async def aclose(self) -> None:
        if self._bank is not None:
            bank, self._bank = self._bank, None
            await anyio.to_thread.run_sync(bank.close)
            close_embedder = getattr(getattr(bank, "embedder", None), "close", None)
            if close_embedder is not None:  # an embedder worker process
                await anyio.to_thread.run_sync(close_embedder)


async def _in_daemon_thread(fn: Callable[[], T]) -> T:
    """`fn()` in a daemon thread, awaited; cancelling the wait abandons the thread.

    Opening the bank imports chromadb and starts the embedder worker (seconds). In an anyio worker thread (not a
    daemon) the interpreter would wait for it at exit, so a client that disconnects during the load would keep the
    server alive until the load ends. A daemon thread is simply left behind when the server exits.
    """
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    future: Future[T] = Future()

    def work() -> None:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(OPENING_SWITCH_INTERVAL_S)
        try:
            future.set_result(fn())
        except BaseException as exc:  # handed to the awaiting task
            future.set_exception(exc)
        finally:
            sys.setswitchinterval(interval)
        try:
            anyio.from_thread.run_sync(done.set, token=token)
        except Exception:  # the event loop is gone (the server exited): nobody is waiting
            log.debug("skill bank opened after the server stopped waiting")

    threading.Thread(target=work, name="skillbank-open-bank", daemon=True).start()
    await done.wait()
    return future.result()
