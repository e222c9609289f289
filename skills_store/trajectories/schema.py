"""The trajectory store's tables: schema and migrations, and how steps and rows map to the models.

Migrations are numbered by SQLite's `user_version` and run once, in the transaction that opens the schema, by the
first process to open the file:

1. Repo identity. Trajectories captured by the Claude Code hook stored the directory name as `repo`, the MCP
   server `owner/name` from the git remote (or nothing). Every stored `repo` is recomputed from its `workspace`
   with `repo_identity` (a workspace that no longer exists keeps its value, or gets its directory name when it
   had none), and each rename of an old value to a single new one is kept in `repo_renames`, so that skills
   distilled from those trajectories can be renamed too (`SkillBank.open` applies them).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from skills_store.errors import InvalidInput, NotFound
from skills_store.models import Outcome, Step, StepKind, StoredStep, Trajectory
from skills_store.repo_identity import repo_identity
from skills_store.truncate import truncate_value

STEP_KINDS = frozenset(get_args(StepKind))
OUTCOMES = frozenset(get_args(Outcome))

SCHEMA = """
CREATE TABLE IF NOT EXISTS trajectories (
    id TEXT PRIMARY KEY, task TEXT, outcome TEXT, status TEXT NOT NULL DEFAULT 'open',
    source TEXT, workspace TEXT, repo TEXT, reward REAL,
    created_at REAL NOT NULL, updated_at REAL NOT NULL, closed_at REAL, step_count INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS trajectories_created ON trajectories (created_at);
CREATE INDEX IF NOT EXISTS trajectories_status ON trajectories (status, closed_at);
CREATE TABLE IF NOT EXISTS steps (
    trajectory_id TEXT NOT NULL, idx INTEGER NOT NULL, ts REAL NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (trajectory_id, idx)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS shown_skills (
    trajectory_id TEXT NOT NULL, skill_id TEXT NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (trajectory_id, skill_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS processed (
    trajectory_id TEXT NOT NULL, distiller TEXT NOT NULL, processed_at REAL NOT NULL,
    PRIMARY KEY (trajectory_id, distiller)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS repo_renames (old TEXT PRIMARY KEY, new TEXT NOT NULL) WITHOUT ROWID;
"""
COLUMNS = "id, task, outcome, status, source, workspace, repo, reward, created_at, updated_at, closed_at"
USER_VERSION = 1


def open_schema(conn: sqlite3.Connection) -> None:
    """Create the tables and run the migrations this file has not had yet, in one write transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Statement by statement: `executescript` would commit the transaction first.
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version < 1:
            migrate_repo_identity(conn)
        if version < USER_VERSION:
            conn.execute(f"PRAGMA user_version = {USER_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def migrate_repo_identity(conn: sqlite3.Connection) -> dict[str, str]:
    """Rewrite every stored `repo` to `repo_identity(workspace)`; returns (and keeps) the unambiguous renames."""
    seen: dict[str | None, set[str]] = {}
    for workspace, repo in conn.execute(
        "SELECT DISTINCT workspace, repo FROM trajectories WHERE workspace IS NOT NULL"
    ).fetchall():
        path = Path(workspace)
        # A workspace that is gone keeps its value: its remote can no longer be read.
        new = repo_identity(path) if path.is_dir() else repo if repo is not None else (path.name or None)
        if new is None or new == repo:
            continue
        conn.execute("UPDATE trajectories SET repo = ? WHERE workspace = ? AND repo IS ?", (new, workspace, repo))
        seen.setdefault(repo, set()).add(new)
    renames = {old: next(iter(new)) for old, new in seen.items() if old is not None and len(new) == 1}
    conn.executemany("INSERT OR REPLACE INTO repo_renames (old, new) VALUES (?, ?)", list(renames.items()))
    return renames


def read_repo_renames(db_path: Path) -> dict[str, str]:
    """The repo renames recorded in the trajectory store at `db_path` ({} without a store or the table)."""
    if not db_path.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
        try:
            return dict(conn.execute("SELECT old, new FROM repo_renames").fetchall())
        finally:
            conn.close()
    except sqlite3.Error:
        return {}


def prepare_steps(steps: Sequence[Step], *, max_step_bytes: int, max_text_chars: int) -> list[tuple[float, str]]:
    """(timestamp, JSON body) rows of `steps`: kinds checked, long texts cut, oversized steps refused."""
    rows: list[tuple[float, str]] = []
    for i, step in enumerate(steps):
        if step.kind not in STEP_KINDS:
            raise InvalidInput(f"step {i}: unknown kind {step.kind!r}; use one of {sorted(STEP_KINDS)}")
        body = step.model_dump(mode="json", exclude_none=True, exclude={"ts", "index"})
        size = len(json.dumps(body, ensure_ascii=False, default=str).encode())
        if size > max_step_bytes:
            raise InvalidInput(
                f"step {i} ({step.kind}) is {size:,} bytes of JSON, over the {max_step_bytes:,}-byte "
                "limit; record a summary of large outputs (the head and tail of long texts are kept anyway)"
            )
        ts = (step.ts or datetime.now(UTC)).timestamp()
        rows.append((ts, json.dumps(truncate_value(body, max_text_chars), ensure_ascii=False)))
    return rows


def _ts(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def now_ts() -> float:
    """Timestamps are stored as UTC epoch seconds."""
    return datetime.now(UTC).timestamp()


def check_outcome(outcome: str | None) -> None:
    if outcome is not None and outcome not in OUTCOMES:
        raise InvalidInput(f"unknown outcome {outcome!r}; use one of {sorted(OUTCOMES)}")


def open_row(conn: sqlite3.Connection, trajectory_id: str) -> tuple[str, int]:
    """(status, step_count) of a trajectory that may still be written to; a missing or closed one is refused."""
    row = conn.execute("SELECT status, step_count FROM trajectories WHERE id = ?", (trajectory_id,)).fetchone()
    if row is None:
        raise NotFound(f"no trajectory {trajectory_id!r}; omit trajectory_id to use this session's trajectory")
    if row[0] != "open":
        raise InvalidInput(
            f"trajectory {trajectory_id!r} is closed and cannot be written to; omit trajectory_id to start a new one"
        )
    return row


def shown_skills(conn: sqlite3.Connection, trajectory_id: str) -> list[str]:
    rows = conn.execute("SELECT skill_id FROM shown_skills WHERE trajectory_id = ? ORDER BY seq", (trajectory_id,))
    return [r[0] for r in rows]


def trajectory_from_row(row: tuple[Any, ...], conn: sqlite3.Connection, with_steps: bool) -> Trajectory:
    """A `Trajectory` from a row of `COLUMNS`, with its shown skills and, if asked, its steps."""
    tid, task, outcome, status, source, workspace, repo, reward, created, updated, closed = row
    traj = Trajectory(
        trajectory_id=tid,
        task=task,
        outcome=outcome,
        status=status,
        source=source,
        workspace=workspace,
        repo=repo,
        reward=reward,
        created_at=_ts(created),
        updated_at=_ts(updated),
        closed_at=None if closed is None else _ts(closed),
        skills_shown=shown_skills(conn, tid),
    )
    if with_steps:
        traj.steps = [
            StoredStep(index=idx, ts=_ts(ts), **json.loads(body))
            for idx, ts, body in conn.execute(
                "SELECT idx, ts, body FROM steps WHERE trajectory_id = ? ORDER BY idx", (tid,)
            )
        ]
    return traj
