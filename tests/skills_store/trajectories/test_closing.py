"""Closing a trajectory that ended without final=true: one function for the MCP server and the Claude Code hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills_store.models import Step
from skills_store.trajectories.closing import NOTE_TOOL, close_with_inferred_outcome, is_closing_note
from skills_store.trajectories.store import SQLiteTrajectoryStore


@pytest.fixture
def store(tmp_path: Path):
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as s:
        yield s


@pytest.mark.parametrize(
    ("reward", "outcome", "why"),
    [
        (1.0, "success", "inferred from the last test run (reward 1.00)"),
        (0.4, "failure", "inferred from the last test run (reward 0.40)"),
        (None, "abandoned", "no outcome was set and no tests were run"),
    ],
)
def test_an_open_trajectory_is_closed_with_the_outcome_of_its_last_test_run(store, reward, outcome, why) -> None:
    tid = store.create(task="fix it").trajectory_id
    store.append(tid, [Step(kind="thought", content="look")])
    if reward is not None:
        store.update(tid, reward=reward)
    closed = close_with_inferred_outcome(store, tid, "session ended (idle) without final=true")
    assert closed is not None
    assert (closed.status, closed.outcome) == ("closed", outcome)
    note = store.get(tid).steps[-1]
    assert note.content == f"session ended (idle) without final=true; outcome {outcome}: {why}"
    assert note.tool == NOTE_TOOL
    assert is_closing_note(note)


def test_the_agents_own_outcome_wins_over_the_test_run(store) -> None:
    tid = store.create().trajectory_id
    store.update(tid, outcome="failure", reward=1.0)
    closed = close_with_inferred_outcome(store, tid, "session ended")
    assert closed is not None
    assert closed.outcome == "failure"
    assert store.get(tid).steps[-1].content.endswith("outcome failure: set by the agent")


def test_a_closed_or_missing_trajectory_is_left_alone(store) -> None:
    tid = store.create().trajectory_id
    store.close_trajectory(tid, "success")
    assert close_with_inferred_outcome(store, tid, "session ended") is None
    assert store.step_count(tid) == 0
    assert close_with_inferred_outcome(store, "traj-nope", "session ended") is None


def test_an_agents_observation_is_not_a_closing_note() -> None:
    assert not is_closing_note(Step(kind="observation", content="3 passed"))
    assert not is_closing_note(Step(kind="message", tool=NOTE_TOOL, content="hello"))
    assert is_closing_note(Step(kind="observation", content="session ended (x); outcome success: set by the agent"))
