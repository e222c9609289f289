"""The catalog: a SQLite sidecar of the skill store (`catalog.db` under the data dir).

It holds, for every skill, its JSON, its filter fields, its vector, and an FTS5 keyword index. Chroma stays the
system of record (the catalog can be rebuilt from it); the catalog makes three things fast that Chroma is slow
at or cannot do: BM25 keyword search, selective filters (Chroma's `where` costs ~60 ms at 100k skills), and
reads that need no model at all (the Claude Code hook's `quick_search`).

This module is storage only: the schema, writes, and reads by id. How those tables are searched (the FTS5
queries, filters, vectors under a filter) lives in `skills_store.search`.
Each write is one transaction, so a reader sees a skill either as it was or as it is, never half-written.
This module imports no heavy library (numpy arrays are only handed in).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from skills_store.datadir import creating
from skills_store.errors import ConfigError
from skills_store.models import Skill, SkillStatus
from skills_store.search.filters import Filters, facet_tokens

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

SCHEMA_VERSION = "2"
BUSY_TIMEOUT_S = 30.0
#: How many merged-away ids `note_merged` remembers (a session open across a dedupe names one of the last few).
MERGED_KEPT = 10_000
"""How long a write waits for another process's write before it fails as busy."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS skills (
    rid INTEGER PRIMARY KEY,
    skill_id TEXT NOT NULL UNIQUE,
    data TEXT NOT NULL,
    language TEXT,
    repo TEXT,
    confidence REAL NOT NULL,
    uses INTEGER NOT NULL DEFAULT 0,
    last_used_at TEXT,
    updated_at TEXT NOT NULL,
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS skills_language ON skills(language);
CREATE INDEX IF NOT EXISTS skills_repo ON skills(repo);
CREATE TABLE IF NOT EXISTS skill_tags (tag TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (tag, rid)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS skill_tags_rid ON skill_tags(rid);
CREATE VIRTUAL TABLE IF NOT EXISTS skills_fts USING fts5(
    title, pattern, strategy, tags, facets, tokenize = "porter unicode61 tokenchars '_'"
);
"""


#: Tables and indexes a current catalog has (an older one gets the missing indexes on open).
_NAMES = {"meta", "skills", "skills_language", "skills_repo", "skill_tags", "skill_tags_rid", "skills_fts"}


def is_busy(error: sqlite3.Error) -> bool:
    """Another connection holds the database (SQLITE_BUSY or SQLITE_LOCKED): a wait, not corruption."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(error) or "busy" in str(error)


def _now() -> str:
    return datetime.now(UTC).isoformat()


class Catalog:
    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        self._uses: dict[str, tuple[int, str]] = {}
        """Uses counted while another process held the write lock: (count, last time), written by a later call."""
        try:
            if readonly:
                self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=5)
            else:
                self._db = sqlite3.connect(
                    str(path), check_same_thread=False, timeout=BUSY_TIMEOUT_S, isolation_level=None
                )
                self._db.execute("PRAGMA synchronous=NORMAL")  # per connection; WAL is kept in the file
                if not self._current():
                    with creating(path.parent):  # another process may be creating this file right now
                        self._migrate()
            version = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise ConfigError(
                    f"the skill catalog {path} is busy: another skillbank process has been writing it for over "
                    f"{BUSY_TIMEOUT_S:g} s ({exc}); the catalog is fine: retry once that process (an import, a reindex)"
                    " is done"
                ) from exc
            raise ConfigError(
                f"the skill catalog {path} is unreadable or corrupt ({exc}); move it away and run "
                "`skillbank skills reindex` to rebuild it from the Chroma store"
            ) from exc
        if version is None or version[0] != SCHEMA_VERSION:
            raise ConfigError(f"the skill catalog {path} has schema {version!r}, expected {SCHEMA_VERSION}")
        self._lock = threading.RLock()

    def _current(self) -> bool:
        """The catalog is in WAL mode with this schema and every index: open it without writing anything.

        An open that wrote would wait for (and, after 30 s, fail on) another process's long write: a reindex.
        """
        if self._db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            return False
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise
            return False  # no meta table yet: a new catalog
        names = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        return row is not None and row[0] == SCHEMA_VERSION and names >= _NAMES

    def _migrate(self) -> None:
        """Create the schema and any index an older catalog lacks (`skill_tags_rid`); a catalog of another schema
        version is emptied (it is rebuilt from Chroma)."""
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is not None and row[0] != SCHEMA_VERSION:
            self._db.executescript(
                "DROP TABLE IF EXISTS skills_fts; DROP TABLE IF EXISTS skill_tags; DROP TABLE IF EXISTS skills;"
            )
        self._db.executescript(_SCHEMA)
        if row is None or row[0] != SCHEMA_VERSION:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))

    def close(self) -> None:
        with self._lock:
            try:
                if self._uses:
                    self.flush_uses()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                log.warning(
                    "%d skills' use counts were not written: %s stayed busy (%s)", len(self._uses), self.path, exc
                )
            finally:
                self._db.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- meta ---------------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def merged_into(self) -> dict[str, str]:
        """Skill ids merged away (by `skills dedupe`) -> the id each was merged into, the newest MERGED_KEPT."""
        return dict(json.loads(self.get_meta("merged") or "{}"))

    def note_merged(self, gone: str, into: str) -> None:
        """`gone` was merged into `into`: an outcome a session records for `gone` later counts for `into`."""
        with self._lock:
            merged = self.merged_into()
            merged.pop(gone, None)
            merged[gone] = into
            while len(merged) > MERGED_KEPT:
                del merged[next(iter(merged))]
            self.set_meta("merged", json.dumps(merged))

    # -- writes -------------------------------------------------------------------------------------------
    def _bump_generation(self) -> None:
        """Every write transaction changes the generation, so other readers know their caches are stale; and it
        completes the write `pending` was set for (see `record_sync`), so the marker goes in the same commit."""
        self._db.execute(
            "INSERT INTO meta VALUES ('generation', '1')"
            " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )
        self._db.execute("DELETE FROM meta WHERE key = 'pending'")

    def upsert(self, skills: Sequence[Skill], embeddings: np.ndarray | None, *, remove: Sequence[str] = ()) -> None:
        """Write skills (and their vectors; None keeps the stored ones), and delete `remove`, in one transaction."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._remove(remove)
                for i, skill in enumerate(skills):
                    blob = None if embeddings is None else embeddings[i].astype("<f4").tobytes()
                    row = self._db.execute("SELECT rid FROM skills WHERE skill_id = ?", (skill.skill_id,)).fetchone()
                    values = (
                        skill.model_dump_json(),
                        skill.language,
                        skill.repo,
                        skill.confidence,
                        skill.uses,
                        skill.updated_at.isoformat(),
                    )
                    if row:
                        rid = row[0]
                        # Use counts only grow: a writer holding an older copy must not undo uses counted meanwhile.
                        self._db.execute(
                            "UPDATE skills SET data=json_set(?, '$.uses', MAX(uses, ?)), language=?, repo=?,"
                            " confidence=?, uses=MAX(uses, ?), updated_at=?, embedding=COALESCE(?, embedding)"
                            " WHERE rid=?",
                            (values[0], skill.uses, *values[1:], blob, rid),
                        )
                        self._db.execute("DELETE FROM skill_tags WHERE rid = ?", (rid,))
                        self._db.execute("DELETE FROM skills_fts WHERE rowid = ?", (rid,))
                    else:
                        cur = self._db.execute(
                            "INSERT INTO skills (skill_id, data, language, repo, confidence, uses, updated_at,"
                            " embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (skill.skill_id, *values, blob),
                        )
                        rid = cur.lastrowid
                    self._db.executemany("INSERT INTO skill_tags VALUES (?, ?)", [(t, rid) for t in skill.tags])
                    self._db.execute(
                        "INSERT INTO skills_fts (rowid, title, pattern, strategy, tags, facets)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            rid,
                            skill.title,
                            skill.pattern,
                            skill.strategy,
                            " ".join(skill.tags),
                            " ".join(facet_tokens(skill.tags, skill.language, skill.repo)),
                        ),
                    )
                self._bump_generation()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def delete(self, skill_ids: Sequence[str]) -> int:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                removed = self._remove(skill_ids)
                self._bump_generation()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return removed

    def _remove(self, skill_ids: Sequence[str]) -> int:
        removed = 0
        for sid in skill_ids:
            row = self._db.execute("SELECT rid FROM skills WHERE skill_id = ?", (sid,)).fetchone()
            if row:
                self._db.execute("DELETE FROM skill_tags WHERE rid = ?", row)
                self._db.execute("DELETE FROM skills_fts WHERE rowid = ?", row)
                self._db.execute("DELETE FROM skills WHERE rid = ?", row)
                removed += 1
        return removed

    def record_uses(self, skill_ids: Sequence[str], *, wait: bool = False) -> None:
        """Count one use of each skill (it was returned to an agent).

        On the search path: when another process holds the write lock (a long import or reindex), the counts are
        kept here and written by a later call instead of blocking the search; `wait=True` (`flush_uses`, close)
        waits for the lock as every other write does.
        """
        now = _now()
        with self._lock:
            for sid in skill_ids:
                self._uses[sid] = (self._uses.get(sid, (0, now))[0] + 1, now)
            if not self._uses:
                return
            pending = [(n, last, n, sid) for sid, (n, last) in self._uses.items()]
            if not wait:
                self._db.execute("PRAGMA busy_timeout = 50")
            try:
                self._db.execute("BEGIN IMMEDIATE")  # all or none: a busy lock fails here, before any update
            except sqlite3.OperationalError as exc:
                if wait or not is_busy(exc):
                    raise
                return  # counted later
            finally:
                if not wait:
                    self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            try:
                self._db.executemany(
                    "UPDATE skills SET uses = uses + ?, last_used_at = ?,"
                    " data = json_set(data, '$.uses', uses + ?) WHERE skill_id = ?",
                    pending,
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._uses.clear()

    def flush_uses(self) -> None:
        """Write the use counts `record_uses` kept back (waiting for another process's write if need be)."""
        self.record_uses([], wait=True)

    @property
    def pending_uses(self) -> int:
        """Skills whose counted uses are not written yet (another process held the write lock)."""
        return len(self._uses)

    # -- reads --------------------------------------------------------------------------------------------
    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Run a read query under the connection's lock: `search/` owns the SQL of its reads (FTS5, filters)."""
        with self._lock:
            return self._db.execute(sql, list(params)).fetchall()

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM skills").fetchone()[0])

    def get(self, skill_ids: Sequence[str]) -> list[Skill]:
        if not skill_ids:
            return []
        with self._lock:
            rows = dict(
                self._db.execute(
                    f"SELECT skill_id, data FROM skills WHERE skill_id IN ({','.join('?' * len(skill_ids))})",
                    list(skill_ids),
                ).fetchall()
            )
        return [Skill.model_validate_json(rows[s]) for s in skill_ids if s in rows]

    def last_used(self, skill_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT last_used_at FROM skills WHERE skill_id = ?", (skill_id,)).fetchone()
        return row[0] if row else None

    def list_skills(
        self, filters: Filters, *, limit: int = 100, offset: int = 0, status: SkillStatus | None = None
    ) -> list[Skill]:
        """Skills matching `filters` (and of `status`: records written before the field read as active)."""
        where, params = filters.sql()
        if status is not None:
            where += " AND COALESCE(json_extract(s.data, '$.status'), 'active') = ?"
            params.append(status)
        with self._lock:
            rows = self._db.execute(
                f"SELECT data FROM skills s WHERE {where} ORDER BY s.confidence DESC, s.skill_id LIMIT ? OFFSET ?",
                [*params, limit, offset],
            ).fetchall()
        return [Skill.model_validate_json(r[0]) for r in rows]

    def iter_ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT skill_id FROM skills ORDER BY rid")]

    def known_values(self) -> dict[str, list[str]]:
        with self._lock:
            langs = [r[0] for r in self._db.execute("SELECT DISTINCT language FROM skills WHERE language IS NOT NULL")]
            repos = [r[0] for r in self._db.execute("SELECT DISTINCT repo FROM skills WHERE repo IS NOT NULL")]
            tags = [r[0] for r in self._db.execute("SELECT DISTINCT tag FROM skill_tags")]
        return {"language": sorted(langs), "repo": sorted(repos), "tags": sorted(tags)}
