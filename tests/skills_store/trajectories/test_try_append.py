"""`try_append`: a short write committed by the caller's own thread, or refused at once (nothing written) when it
would have to wait for another writer; what the capture of a search or a patch uses instead of a thread hop."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from skills_store.errors import InvalidInput
from skills_store.models import Step
from skills_store.trajectories.store import SQLiteTrajectoryStore, SQLiteTrajectoryStoreConfig


def steps_of(db: Path, tid: str) -> list[str]:
    with SQLiteTrajectoryStore(db) as store:
        return [s.content for s in store.get(tid).steps]


def test_an_idle_store_commits_the_step_at_once_with_its_shown_skills(tmp_path: Path) -> None:
    with SQLiteTrajectoryStore(tmp_path / "t.db") as store:
        tid = store.create().trajectory_id
        assert store.try_append(tid, [Step(kind="tool_call", content="one")], shown_skills=["sk-1"], durable=False) == 1
        assert store.try_append(tid, [Step(kind="tool_call", content="two")], durable=False) == 2
        assert store.shown_skills(tid) == ["sk-1"]
    assert steps_of(tmp_path / "t.db", tid) == ["one", "two"]


def test_another_process_holding_the_database_gets_a_refusal_without_waiting_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    db = tmp_path / "t.db"
    with SQLiteTrajectoryStore(db, SQLiteTrajectoryStoreConfig(busy_timeout_s=30)) as store:
        tid = store.create().trajectory_id
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # the write lock, as another skillbank process writing would hold it
        start = time.perf_counter()
        assert store.try_append(tid, [Step(kind="tool_call", content="refused")]) is None
        assert time.perf_counter() - start < 5  # not the 30 s busy timeout
        other.execute("ROLLBACK")
        other.close()
        # The refusal left the store as it was: its busy timeout, and a write that waits still works.
        assert store.append(tid, [Step(kind="tool_call", content="later")]) == 1
        assert store._writer._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
    assert steps_of(db, tid) == ["later"]


def test_a_write_running_in_another_thread_gets_a_refusal_and_the_running_one_is_unaffected(tmp_path: Path) -> None:
    with SQLiteTrajectoryStore(tmp_path / "t.db") as store:
        tid = store.create().trajectory_id
        entered, release = threading.Event(), threading.Event()

        def slow(conn: sqlite3.Connection) -> None:
            entered.set()
            assert release.wait(30)
            conn.execute("INSERT INTO steps (trajectory_id, idx, ts, body) VALUES (?, 0, 0, '{}')", (tid,))
            conn.execute("UPDATE trajectories SET step_count = 1 WHERE id = ?", (tid,))

        writer = threading.Thread(target=store._writer.write, args=(slow,))
        writer.start()
        assert entered.wait(30)
        assert store.try_append(tid, [Step(kind="tool_call", content="refused")]) is None
        release.set()
        writer.join(30)
        assert store.try_append(tid, [Step(kind="tool_call", content="now")]) == 2


def test_a_closed_trajectory_is_refused_the_same_way_append_refuses_it(tmp_path: Path) -> None:
    with SQLiteTrajectoryStore(tmp_path / "t.db") as store:
        tid = store.create().trajectory_id
        store.close_trajectory(tid, "success")
        with pytest.raises(InvalidInput, match="closed"):
            store.try_append(tid, [Step(kind="tool_call", content="late")], shown_skills=["sk-1"])
        assert store.shown_skills(tid) == []
