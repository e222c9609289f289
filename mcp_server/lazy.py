"""`LazySkillBank`: opens the skill bank (Chroma, the embedding model) in a worker thread after the handshake.

`initialize` and `tools/list` must not wait for torch. The server calls `trigger()` once the client has
listed tools (or after a short grace period), the bank opens in a thread, and the first tool that needs it
awaits `get()`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from skills_store.errors import ConfigError

if TYPE_CHECKING:
    from skills_store.bank import SkillBank

log = logging.getLogger(__name__)


class SkillBankUnavailable(Exception):
    """The skill bank could not be opened; the message names the path and the fix."""


class LazySkillBank:
    def __init__(self, opener: Callable[[], SkillBank]) -> None:
        self._opener = opener
        self._bank: SkillBank | None = None
        self._error: BaseException | None = None
        # anyio events need a running event loop, so they are made on first use inside it.
        self._triggered_event: anyio.Event | None = None
        self._ready_event: anyio.Event | None = None

    @property
    def _triggered(self) -> anyio.Event:
        if self._triggered_event is None:
            self._triggered_event = anyio.Event()
        return self._triggered_event

    @property
    def _ready(self) -> anyio.Event:
        if self._ready_event is None:
            self._ready_event = anyio.Event()
        return self._ready_event

    @property
    def ready(self) -> bool:
        return self._ready_event is not None and self._ready_event.is_set()

    def trigger(self) -> None:
        """Ask for the bank to be opened (idempotent); `run()` does the work. Call from the event loop."""
        self._triggered.set()

    async def run(self, grace_s: float | None = None) -> None:
        """Open the bank once triggered (or after `grace_s` seconds). Runs in the server's task group."""
        with anyio.move_on_after(grace_s):
            await self._triggered.wait()
        try:
            self._bank = await anyio.to_thread.run_sync(self._opener, abandon_on_cancel=True)
        except ConfigError as exc:
            log.error("skill bank unavailable: %s", exc)
            self._error = exc
        except Exception as exc:
            log.exception("skill bank failed to open")
            self._error = exc
        finally:
            self._ready.set()

    async def get(self) -> SkillBank:
        self.trigger()
        await self._ready.wait()
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
