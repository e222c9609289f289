"""Checks of the data dir that run at start-up, before anything heavy is imported.

A corrupt or unreadable data dir must stop the server with a message that names the path, not with a
traceback from deep inside Chroma minutes later.

Several processes may open one fresh data dir at once (best-of-N servers, a CLI next to a server). A SQLite
file another process has just created is empty, or half-initialised, for a moment; so every creation or
migration of a store (trajectories.db, catalog.db, the Chroma dir) and the header checks here run under one
file lock per data dir (`creating`), and an empty file counts as a new database, not a corrupt one.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from skills_store.errors import ConfigError

SQLITE_MAGIC = b"SQLite format 3\x00"
CREATE_LOCK = ".create.lock"
CREATE_TIMEOUT_S = 120.0
"""How long an open waits for another process creating or migrating a store in the same data dir."""


@contextmanager
def creating(home: Path) -> Iterator[None]:
    """Held while a store under `home` is created, migrated or checked, across threads and processes.

    Not re-entrant across calls: take it around one store's opening at a time.
    """
    home.mkdir(parents=True, exist_ok=True)
    lock = FileLock(home / CREATE_LOCK, timeout=CREATE_TIMEOUT_S)
    try:
        lock.acquire()
    except Timeout as exc:
        raise ConfigError(
            f"another process has been creating the stores in {home} for over {CREATE_TIMEOUT_S:.0f} s; "
            f"if none is running, remove {home / CREATE_LOCK}"
        ) from exc
    try:
        yield
    finally:
        lock.release()


def check_data_dir(home: Path) -> None:
    """The data dir exists (or can be made), is a directory and is writable."""
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the data dir {home}: {exc.strerror}; set SKILLBANK_HOME") from exc
    if not home.is_dir():
        raise ConfigError(f"the data dir {home} is not a directory; set SKILLBANK_HOME to a directory")
    try:
        # A name of its own: two processes checking one dir at once must not remove each other's probe.
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=home)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        fix = _WRITE_FIXES.get(exc.errno or 0, "fix its permissions or set SKILLBANK_HOME to a writable directory")
        raise ConfigError(f"the data dir {home} is not writable: {exc.strerror}; {fix}") from exc


#: What to do about a data dir that cannot be written, by the error's errno (else: its permissions).
_WRITE_FIXES = {
    errno.EROFS: "its file system is mounted read-only: set SKILLBANK_HOME to a directory on a writable one",
    errno.ENOSPC: "its disk is full: free space there or set SKILLBANK_HOME to a directory on another disk",
    errno.EDQUOT: "your disk quota there is used up: free space or set SKILLBANK_HOME to a directory elsewhere",
}


def _check_sqlite(path: Path, what: str, fix: str) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return  # not created yet, or created and not yet written: SQLite opens an empty file as a new database
    try:
        with path.open("rb") as fh:
            header = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from exc
    if header != SQLITE_MAGIC:
        raise ConfigError(f"{what} {path} is not a SQLite database (corrupt?); {fix}")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise ConfigError(f"{what} {path} is unreadable ({exc}); {fix}") from exc


def preflight(home: Path) -> None:
    """Everything that can be checked in milliseconds: the dir, and the headers of the databases in it."""
    check_data_dir(home)
    with creating(home):
        _check_stores(home)


def _check_stores(home: Path) -> None:
    _check_sqlite(
        home / "catalog.db", "the skill catalog", "move it away; `skillbank skills reindex` rebuilds it from Chroma"
    )
    _check_sqlite(
        home / "chroma" / "chroma.sqlite3",
        "the Chroma skill store",
        "restore it from a backup or move it away and re-import your skills (`skillbank skills import`)",
    )
    _check_sqlite(home / "trajectories.db", "the trajectory store", "restore it from a backup or move it away")
