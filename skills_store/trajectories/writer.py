"""Group commit for SQLite: many threads write, one transaction (and one fsync) covers all that are waiting.

A write is a function of the connection. The first waiting thread becomes the leader: it takes every queued
write, runs each inside its own savepoint (a write that raises is rolled back alone and its error goes back to
its caller), commits once, and only then wakes the callers. So a write that returned is on disk, and
concurrent writers share the cost of the commit instead of queueing behind one fsync each.

A write may be marked not `durable` (the automatic capture of a search or a patch): a group made only of such
writes commits with `synchronous=NORMAL`, which in WAL mode survives a crash of the process (the commit is in the
WAL file) but not of the machine until the next durable commit or checkpoint, and costs no fsync.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class _Job(Generic[T]):
    __slots__ = ("done", "durable", "error", "fn", "result")

    def __init__(self, fn: Callable[[sqlite3.Connection], T], durable: bool = True) -> None:
        self.fn = fn
        self.durable = durable
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = False


def connect(path: Path, *, busy_timeout_s: float, synchronous: str = "FULL") -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL journal, usable from any thread."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_s)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise sqlite3.OperationalError(f"{path}: the filesystem does not support SQLite WAL mode (got {mode!r})")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    return conn


class GroupCommitWriter:
    """Serialises writes from many threads onto one connection, committing them in groups."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._cv = threading.Condition(threading.Lock())
        self._queue: list[_Job[Any]] = []
        self._leader = False
        self._closed = False
        self._durable = int(conn.execute("PRAGMA synchronous").fetchone()[0]) >= 2  # FULL (2) or EXTRA (3)
        self._busy_ms = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
        self.commits = 0
        """How many transactions were committed (for tests and benchmarks)."""

    def write(self, fn: Callable[[sqlite3.Connection], T], *, durable: bool = True) -> T:
        """Run `fn(conn)` in a transaction; return its result once the transaction is committed (and, when
        `durable`, on disk)."""
        job: _Job[T] = _Job(fn, durable)
        with self._cv:
            if self._closed:
                raise sqlite3.ProgrammingError("the trajectory store is closed")
            self._queue.append(job)
            while not job.done:
                if self._leader:
                    self._cv.wait()
                    continue
                self._leader = True
                batch, self._queue = self._queue, []
                self._cv.release()
                try:
                    self._run(batch)
                finally:
                    self._cv.acquire()
                    self._leader = False
                    self._cv.notify_all()
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    def try_write(self, fn: Callable[[sqlite3.Connection], T], *, durable: bool = True) -> tuple[bool, T | None]:
        """`(True, fn(conn))` committed in this thread when nothing else is writing or waiting, in this process or
        (the database lock) in another; `(False, None)` with nothing written otherwise. For a caller that must not
        block (the event loop): it runs `write` in a thread instead when refused."""
        if not self._cv.acquire(blocking=False):
            return False, None
        try:
            if self._closed:
                raise sqlite3.ProgrammingError("the trajectory store is closed")
            if self._leader or self._queue:
                return False, None
            self._leader = True
        finally:
            self._cv.release()
        job: _Job[T] = _Job(fn, durable)
        try:
            self._conn.execute("PRAGMA busy_timeout = 0")
            try:
                self._run([job])
            finally:
                self._conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
        finally:
            with self._cv:
                self._leader = False
                self._cv.notify_all()
        if isinstance(job.error, sqlite3.OperationalError) and _locked(job.error):
            return False, None
        if job.error is not None:
            raise job.error
        return True, job.result

    def _run(self, batch: list[_Job[Any]]) -> None:
        conn = self._conn
        durable = any(job.durable for job in batch)
        try:
            if durable != self._durable:
                conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
                self._durable = durable
            conn.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            for job in batch:
                job.error, job.done = exc, True
            return
        try:
            for job in batch:
                conn.execute("SAVEPOINT job")
                try:
                    job.result = job.fn(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO job")
                    job.error = exc
                conn.execute("RELEASE job")
            conn.execute("COMMIT")
            self.commits += 1
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            for job in batch:
                job.error = job.error or exc
        finally:
            for job in batch:
                job.done = True

    def close(self) -> None:
        with self._cv:
            while self._leader:
                self._cv.wait()
            self._closed = True
            self._conn.close()


def _locked(error: sqlite3.OperationalError) -> bool:
    """Another connection holds the database: SQLITE_BUSY or SQLITE_LOCKED, or one of their extended codes."""
    return getattr(error, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
