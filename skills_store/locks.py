"""The locks of the skill bank: readers and writers within a process, writers across processes.

Several processes share one data dir (the server, a CLI import, the Claude Code hook). Chroma's persistent
client does not see another process's writes until it is reopened, so every write bumps the catalog's
`generation`, and a process that sees a generation it did not write reopens its client before it reads or writes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

if TYPE_CHECKING:
    from skills_store.catalog import Catalog
    from skills_store.protocols import SkillStore


class ReadWriteLock:
    """Many readers at once, or one writer alone (within one process)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writing:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if self._readers == 0:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._readers:
                self._cond.wait()
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


class WriterLock:
    """Serialises the bank's writers across threads and processes, and catches up with other processes' writes.

    Re-entrant: a write made of smaller writes (an outcome that updates skills) takes it once. `thread_lock` is
    also the bank's lock for its in-memory state (the dirty use counters).
    """

    def __init__(self, catalog: Catalog, store: SkillStore, queries: ReadWriteLock) -> None:
        self.catalog = catalog
        self.store = store
        self.queries = queries
        """Held shared by vector queries; taken exclusively here while the Chroma client is reopened."""
        self.thread_lock = threading.RLock()
        self._file_lock = FileLock(catalog.path.with_name(".skills.lock"))
        self._depth = 0
        self._seen_generation = catalog.get_meta("generation")

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Write alone. The outermost entry first catches up with what other processes wrote, and afterwards
        remembers the generation it left, so this process does not reopen Chroma for its own writes."""
        with self.thread_lock, self._file_lock:
            outermost = self._depth == 0
            self._depth += 1
            try:
                if outermost:
                    self.refresh_if_stale()
                yield
                if outermost:
                    self._seen_generation = self.catalog.get_meta("generation")
            finally:
                self._depth -= 1

    @contextmanager
    def exclusive_if_free(self) -> Iterator[bool]:
        """`exclusive()` when no other process is writing (yields True), else nothing (False), without waiting.

        For work that is needed only when a writer died mid-write: a live writer finishes its own write.
        """
        with self.thread_lock:
            if self._depth:
                with self.exclusive():
                    yield True
                return
            try:
                self._file_lock.acquire(timeout=0)
            except Timeout:
                yield False
                return
            try:
                with self.exclusive():
                    yield True
            finally:
                self._file_lock.release()

    def reopen(self) -> None:
        """Reopen Chroma now (a writer died after writing to it without a new generation: `restore_pending`)."""
        with self.thread_lock:
            with self.queries.write():
                self.store.reopen()
            self._seen_generation = self.catalog.get_meta("generation")

    def refresh_if_stale(self) -> None:
        """Another process wrote skills: reopen Chroma so this process's vector index sees them.

        Queries in flight finish on the old client first (`queries`); a write of this process that is still
        finishing holds `thread_lock`, so the generation is checked again once it is released.
        """
        if self.catalog.get_meta("generation") == self._seen_generation:
            return
        with self.thread_lock:
            generation = self.catalog.get_meta("generation")
            if generation == self._seen_generation:
                return
            with self.queries.write():
                self.store.reopen()
            self._seen_generation = generation
