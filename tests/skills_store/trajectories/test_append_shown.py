"""A captured search's step and the skills it showed: one transaction, and for a search no fsync."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skills_store.errors import InvalidInput
from skills_store.models import Step
from skills_store.trajectories.store import SQLiteTrajectoryStore


def _step(text: str) -> Step:
    return Step(kind="tool_call", tool="search_skills", content=text)


def test_skills_shown_with_an_appended_step_are_linked_in_order_once_and_in_one_commit(tmp_path: Path) -> None:
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as store:
        tid = store.create(task="t").trajectory_id
        store.link_skills(tid, ["sk-a"])
        before = store._writer.commits
        assert store.append(tid, [_step("search")], shown_skills=["sk-b", "sk-a", "sk-c", "sk-b"]) == 1
        assert store._writer.commits == before + 1
        assert store.shown_skills(tid) == ["sk-a", "sk-b", "sk-c"]


def test_an_append_refused_for_a_closed_trajectory_links_none_of_its_skills(tmp_path: Path) -> None:
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as store:
        tid = store.create(task="t").trajectory_id
        store.close_trajectory(tid)
        with pytest.raises(InvalidInput):
            store.append(tid, [_step("late")], shown_skills=["sk-a"])
        assert store.shown_skills(tid) == []


def _synchronous(store: SQLiteTrajectoryStore) -> int:
    return int(store._writer._conn.execute("PRAGMA synchronous").fetchone()[0])


def test_a_read_only_capture_commits_without_an_fsync_and_the_next_durable_write_with_one(tmp_path: Path) -> None:
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as store:
        tid = store.create(task="t").trajectory_id
        store.append(tid, [_step("search")], shown_skills=["sk-a"], durable=False)
        assert _synchronous(store) == 1  # NORMAL: committed to the WAL, no fsync
        store.append(tid, [_step("patch")])
        assert _synchronous(store) == 2  # FULL again: this commit syncs the WAL, the search step's frames too
        assert [s.content for s in store.get(tid).steps] == ["search", "patch"]


WRITER = """
import os, sys
from pathlib import Path
from skills_store.models import Step
from skills_store.trajectories.store import SQLiteTrajectoryStore
store = SQLiteTrajectoryStore(Path(sys.argv[1]))
tid = store.create(task="t").trajectory_id
for i in range(50):
    store.append(tid, [Step(kind="tool_call", tool="search_skills", content=f"s{i}")], shown_skills=[f"sk-{i}"],
                 durable=False)
print(tid, flush=True)
os._exit(0)  # no close, no checkpoint: what a crashed server leaves
"""


@pytest.mark.e2e
def test_read_only_captures_survive_a_crash_of_the_process_that_wrote_them(tmp_path: Path) -> None:
    db = tmp_path / "trajectories.db"
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(db)], capture_output=True, text=True, check=True, cwd=Path.cwd()
    )
    tid = done.stdout.strip()
    with SQLiteTrajectoryStore(db) as store:
        assert [s.content for s in store.get(tid).steps] == [f"s{i}" for i in range(50)]
        assert store.shown_skills(tid) == [f"sk-{i}" for i in range(50)]
