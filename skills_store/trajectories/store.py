"""`SQLiteTrajectoryStore`: trajectories and their steps in one SQLite file (WAL mode).

Safe for many threads and many processes at once (MCP servers, Claude Code hook processes, the CLI): writes
are serialised by SQLite's write lock (`BEGIN IMMEDIATE` with a busy timeout) and, inside a process, grouped
into shared transactions (`GroupCommitWriter`). A call that returned has been committed with
`synchronous=FULL`, so an acknowledged step survives a crash of the process or of the machine (an `append` with
`durable=False`, the automatic capture of a search or a patch, survives a crash of the process).

Texts longer than `max_text_chars` are cut to their head and tail around a marker saying how much was left
out; a step whose JSON exceeds `max_step_bytes` is refused. Callers redact before they append.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, Field

from skills_store.datadir import creating
from skills_store.errors import ConfigError, InvalidInput, NotFound
from skills_store.models import Outcome, Step, Trajectory, TrajectoryStatus, new_id
from skills_store.trajectories import schema
from skills_store.trajectories.writer import GroupCommitWriter, connect


class SQLiteTrajectoryStoreConfig(BaseModel):
    """Limits and timeouts of the SQLite trajectory store."""

    max_text_chars: int = Field(default=20_000, ge=200)
    """Longer texts (content, and every string inside args and result) keep their head and tail only."""
    max_step_bytes: int = Field(default=2_000_000, ge=1_000)
    """A step whose JSON is larger than this is refused with `InvalidInput` rather than stored."""
    max_steps: int = Field(default=100_000, ge=1)
    """A trajectory holds at most this many steps; close it and start another."""
    busy_timeout_s: float = Field(default=30.0, gt=0)
    """How long a write waits for another process holding the database's write lock."""


class SQLiteTrajectoryStore:
    """The `TrajectoryStore` on SQLite. All methods block; async code calls them through a worker thread."""

    def __init__(self, path: Path, config: SQLiteTrajectoryStoreConfig | None = None) -> None:
        self.path = Path(path)
        self.config = config or SQLiteTrajectoryStoreConfig()
        try:
            with creating(self.path.parent):  # another process may be creating this file right now
                conn = connect(self.path, busy_timeout_s=self.config.busy_timeout_s)
                schema.open_schema(conn)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the trajectory store at {self.path}: {exc}") from exc
        self._writer = GroupCommitWriter(conn)
        self._readers: dict[int, sqlite3.Connection] = {}
        self._readers_lock = threading.Lock()

    # -- connections ---------------------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        key = threading.get_ident()
        conn = self._readers.get(key)
        if conn is None:
            conn = connect(self.path, busy_timeout_s=self.config.busy_timeout_s, synchronous="NORMAL")
            conn.execute("PRAGMA query_only = ON")
            with self._readers_lock:
                self._readers[key] = conn
        return conn

    def close(self) -> None:
        """Close every connection; the store cannot be used afterwards. (`close_trajectory` closes a trajectory.)"""
        self._writer.close()
        with self._readers_lock:
            for conn in self._readers.values():
                conn.close()
            self._readers.clear()

    def __enter__(self) -> SQLiteTrajectoryStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def commits(self) -> int:
        """Transactions committed by this instance (steps are grouped, so usually fewer than the appends)."""
        return self._writer.commits

    # -- writes --------------------------------------------------------------------------------------------

    def create(
        self,
        *,
        trajectory_id: str | None = None,
        task: str | None = None,
        source: str | None = None,
        workspace: str | None = None,
        repo: str | None = None,
    ) -> Trajectory:
        traj = Trajectory(
            trajectory_id=trajectory_id or new_id("traj"), task=task, source=source, workspace=workspace, repo=repo
        )
        now = traj.created_at.timestamp()

        def insert(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(
                    "INSERT INTO trajectories (id, task, source, workspace, repo, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (traj.trajectory_id, task, source, workspace, repo, now, now),
                )
            except sqlite3.IntegrityError:
                raise InvalidInput(
                    f"trajectory {traj.trajectory_id!r} already exists; omit trajectory_id to get a new one"
                ) from None

        self._writer.write(insert)
        return traj

    def ensure(
        self,
        trajectory_id: str,
        *,
        task: str | None = None,
        source: str | None = None,
        workspace: str | None = None,
        repo: str | None = None,
    ) -> Trajectory:
        """The trajectory with this id, created (open) if it does not exist yet. Safe across processes."""
        now = schema.now_ts()
        self._writer.write(
            lambda conn: conn.execute(
                "INSERT OR IGNORE INTO trajectories (id, task, source, workspace, repo, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (trajectory_id, task, source, workspace, repo, now, now),
            )
        )
        return self.get(trajectory_id, with_steps=False)

    def append(
        self, trajectory_id: str, steps: Sequence[Step], *, shown_skills: Sequence[str] = (), durable: bool = True
    ) -> int:
        """Append steps, and link `shown_skills` (see `link_skills`) in the same transaction: a captured search
        costs one commit, not two. `durable=False` (the automatic capture of a search or a patch, on its response
        path) commits without an fsync: it survives a crash of the process, and reaches the disk with the next durable
        commit."""
        return self._writer.write(self._appending(trajectory_id, steps, shown_skills), durable=durable)

    def try_append(
        self, trajectory_id: str, steps: Sequence[Step], *, shown_skills: Sequence[str] = (), durable: bool = True
    ) -> int | None:
        """`append`, but only if it can commit at once, with no other write running or waiting (in this process,
        or holding the database in another); None, with nothing written, otherwise. What the event loop calls
        instead of paying a thread hop for a short write."""
        done, total = self._writer.try_write(self._appending(trajectory_id, steps, shown_skills), durable=durable)
        return total if done else None

    def check_steps(self, steps: Sequence[Step]) -> None:
        schema.prepare_steps(
            steps, max_step_bytes=self.config.max_step_bytes, max_text_chars=self.config.max_text_chars
        )

    def _appending(
        self, trajectory_id: str, steps: Sequence[Step], shown_skills: Sequence[str]
    ) -> Callable[[sqlite3.Connection], int]:
        shown = list(dict.fromkeys(shown_skills))
        rows = schema.prepare_steps(
            steps, max_step_bytes=self.config.max_step_bytes, max_text_chars=self.config.max_text_chars
        )

        def write(conn: sqlite3.Connection) -> int:
            _, count = schema.open_row(conn, trajectory_id)
            total = count + len(rows)
            if total > self.config.max_steps:
                raise InvalidInput(
                    f"trajectory {trajectory_id!r} would exceed {self.config.max_steps:,} steps; close it "
                    "(final=true) and record the rest in a new one"
                )
            conn.executemany(
                "INSERT INTO steps (trajectory_id, idx, ts, body) VALUES (?, ?, ?, ?)",
                [(trajectory_id, count + i, ts, body) for i, (ts, body) in enumerate(rows)],
            )
            conn.execute(
                "UPDATE trajectories SET step_count = ?, updated_at = ? WHERE id = ?",
                (total, schema.now_ts(), trajectory_id),
            )
            if shown:
                _link(conn, trajectory_id, shown)
            return total

        return write

    def update(
        self,
        trajectory_id: str,
        *,
        task: str | None = None,
        outcome: Outcome | None = None,
        reward: float | None = None,
    ) -> Trajectory:
        schema.check_outcome(outcome)

        def write(conn: sqlite3.Connection) -> None:
            schema.open_row(conn, trajectory_id)
            conn.execute(
                "UPDATE trajectories SET task = coalesce(?, task), outcome = coalesce(?, outcome), "
                "reward = coalesce(?, reward), updated_at = ? WHERE id = ?",
                (task, outcome, reward, schema.now_ts(), trajectory_id),
            )

        self._writer.write(write)
        return self.get(trajectory_id, with_steps=False)

    def close_trajectory(self, trajectory_id: str, outcome: Outcome | None = None) -> Trajectory:
        """Close a trajectory (no more steps), with `outcome` if given; closing a closed one is refused."""
        schema.check_outcome(outcome)

        def write(conn: sqlite3.Connection) -> None:
            schema.open_row(conn, trajectory_id)
            now = schema.now_ts()
            conn.execute(
                "UPDATE trajectories SET status = 'closed', outcome = coalesce(?, outcome), closed_at = ?, "
                "updated_at = ? WHERE id = ?",
                (outcome, now, now, trajectory_id),
            )

        self._writer.write(write)
        return self.get(trajectory_id, with_steps=False)

    def link_skills(self, trajectory_id: str, skill_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(skill_ids))
        if not ids:
            return

        def write(conn: sqlite3.Connection) -> None:
            if conn.execute("SELECT 1 FROM trajectories WHERE id = ?", (trajectory_id,)).fetchone() is None:
                raise NotFound(f"no trajectory {trajectory_id!r}")
            _link(conn, trajectory_id, ids)

        self._writer.write(write)

    def mark_processed(self, trajectory_ids: Sequence[str], distiller: str) -> None:
        """Remember that `distiller` has processed these trajectories (they leave its `pending_for`)."""
        ids = list(dict.fromkeys(trajectory_ids))
        now = schema.now_ts()

        def write(conn: sqlite3.Connection) -> None:
            for tid in ids:
                if conn.execute("SELECT 1 FROM trajectories WHERE id = ?", (tid,)).fetchone() is None:
                    raise NotFound(f"no trajectory {tid!r}; nothing was marked")
            conn.executemany(
                "INSERT OR IGNORE INTO processed (trajectory_id, distiller, processed_at) VALUES (?, ?, ?)",
                [(tid, distiller, now) for tid in ids],
            )

        self._writer.write(write)

    def close_stale(self, idle_for: timedelta, outcome: Outcome = "abandoned") -> list[str]:
        """Close every open trajectory with no write for `idle_for`; return their ids."""
        cutoff = schema.now_ts() - idle_for.total_seconds()

        def write(conn: sqlite3.Connection) -> list[str]:
            ids = [
                r[0]
                for r in conn.execute("SELECT id FROM trajectories WHERE status='open' AND updated_at < ?", (cutoff,))
            ]
            now = schema.now_ts()
            conn.executemany(
                "UPDATE trajectories SET status='closed', outcome=coalesce(outcome, ?), closed_at=?, updated_at=? "
                "WHERE id = ?",
                [(outcome, now, now, tid) for tid in ids],
            )
            return ids

        return self._writer.write(write)

    # -- reads ---------------------------------------------------------------------------------------------

    def get(self, trajectory_id: str, *, with_steps: bool = True) -> Trajectory:
        conn = self._reader()
        row = conn.execute(f"SELECT {schema.COLUMNS} FROM trajectories WHERE id = ?", (trajectory_id,)).fetchone()
        if row is None:
            raise NotFound(f"no trajectory {trajectory_id!r}; `skillbank trajectories list` shows the ids")
        return schema.trajectory_from_row(row, conn, with_steps)

    def step_count(self, trajectory_id: str) -> int:
        row = self._reader().execute("SELECT step_count FROM trajectories WHERE id = ?", (trajectory_id,)).fetchone()
        if row is None:
            raise NotFound(f"no trajectory {trajectory_id!r}")
        return int(row[0])

    def shown_skills(self, trajectory_id: str) -> list[str]:
        """The skill ids shown to the trajectory, in the order they were first shown."""
        self.step_count(trajectory_id)
        return schema.shown_skills(self._reader(), trajectory_id)

    def pending_for(self, distiller: str, limit: int = 100) -> list[Trajectory]:
        """Closed trajectories (with steps) that `distiller` has not processed yet, oldest closed first."""
        conn = self._reader()
        rows = conn.execute(
            f"SELECT {schema.COLUMNS} FROM trajectories t WHERE status = 'closed' AND NOT EXISTS "
            "(SELECT 1 FROM processed p WHERE p.trajectory_id = t.id AND p.distiller = ?) "
            "ORDER BY closed_at, id LIMIT ?",
            (distiller, limit),
        ).fetchall()
        return [schema.trajectory_from_row(row, conn, with_steps=True) for row in rows]

    def list(
        self,
        *,
        status: TrajectoryStatus | None = None,
        since: datetime | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Trajectory]:
        if limit < 1 or offset < 0:
            raise InvalidInput("limit must be at least 1 and offset at least 0")
        conn = self._reader()
        rows = conn.execute(
            f"SELECT {schema.COLUMNS} FROM trajectories WHERE (? IS NULL OR status = ?) "
            "AND (? IS NULL OR created_at >= ?) ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            (status, status, since and since.timestamp(), since and since.timestamp(), limit, offset),
        ).fetchall()
        return [schema.trajectory_from_row(row, conn, with_steps=False) for row in rows]


def _link(conn: sqlite3.Connection, trajectory_id: str, skill_ids: Sequence[str]) -> None:
    """Record skills as shown in this trajectory, in order after those shown before (a skill counts once)."""
    seq = conn.execute(
        "SELECT coalesce(max(seq), -1) + 1 FROM shown_skills WHERE trajectory_id = ?", (trajectory_id,)
    ).fetchone()[0]
    conn.executemany(
        "INSERT OR IGNORE INTO shown_skills (trajectory_id, skill_id, seq) VALUES (?, ?, ?)",
        [(trajectory_id, sid, seq + i) for i, sid in enumerate(skill_ids)],
    )
