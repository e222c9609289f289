"""One first-come-first-served lock per key: `record_trajectory` calls to one trajectory are stored in the order
they arrived, also when a client sends them without waiting for each answer (JSON-RPC lets the server answer
requests in any order, and their writes ran in a thread pool, so pipelined steps were stored shuffled)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class KeyedLocks:
    """A lock per key, made on first use and dropped when no call holds or waits for it.

    anyio's lock wakes its waiters in the order they came, and calls reach `hold` in the order their requests were
    read (each request's task runs the same path to it), so the holders follow the requests' order.
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[anyio.Lock, int]] = {}

    def __len__(self) -> int:
        """How many keys have a call holding or waiting for their lock."""
        return len(self._locks)

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(key) or (anyio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
