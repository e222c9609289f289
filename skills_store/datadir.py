"""Checks of the data dir that run at start-up, before anything heavy is imported.

A corrupt or unreadable data dir must stop the server with a message that names the path, not with a
traceback from deep inside Chroma minutes later.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from skills_store.errors import ConfigError

SQLITE_MAGIC = b"SQLite format 3\x00"


def check_data_dir(home: Path) -> None:
    """The data dir exists (or can be made), is a directory and is writable."""
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the data dir {home}: {exc.strerror}; set SKILLBANK_HOME") from exc
    if not home.is_dir():
        raise ConfigError(f"the data dir {home} is not a directory; set SKILLBANK_HOME to a directory")
    probe = home / ".write-probe"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"the data dir {home} is not writable: {exc.strerror}; fix its permissions") from exc


def _check_sqlite(path: Path, what: str, fix: str) -> None:
    if not path.exists():
        return
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
    _check_sqlite(
        home / "catalog.db", "the skill catalog", "move it away; `skillbank skills reindex` rebuilds it from Chroma"
    )
    _check_sqlite(
        home / "chroma" / "chroma.sqlite3",
        "the Chroma skill store",
        "restore it from a backup or move it away and re-import your skills (`skillbank skills import`)",
    )
    _check_sqlite(home / "trajectories.db", "the trajectory store", "restore it from a backup or move it away")
