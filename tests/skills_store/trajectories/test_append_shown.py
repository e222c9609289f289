"""A captured search's step and the skills it showed are stored in one transaction (one commit on the path)."""

from __future__ import annotations

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
