"""Claude Code hook events -> trajectory steps, in the core, with a real store on a temp dir and no I/O."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills_store.errors import InvalidInput
from skills_store.redact import Redactor
from skills_store.trajectories.claude_events import parse_event, record_event
from skills_store.trajectories.store import SQLiteTrajectoryStore

TOKEN = "ghp_" + "Zq8vN2mLx4TrZq8vN2mLx4TrZq8vN2mLx4Tr"


@pytest.fixture
def store(tmp_path: Path):
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as s:
        yield s


def event(name: str, **fields) -> dict:
    return {"hook_event_name": name, "session_id": "abc-1", "cwd": "/work/proj", **fields}


def test_a_session_becomes_one_trajectory_with_a_step_per_event_closed_by_the_last_test_run(store) -> None:
    red = Redactor()
    assert record_event(event("SessionStart"), store, red) == "claude-abc-1"
    record_event(event("UserPromptSubmit", prompt="fix the failing test"), store, red)
    record_event(
        event("PostToolUse", tool_name="Edit", tool_input={"file_path": "/work/proj/a.py", "new_string": TOKEN}),
        store,
        red,
    )
    record_event(event("PostToolUseFailure", tool_name="Bash", tool_input={"command": "pytest -q"}), store, red)
    record_event(event("PostToolUse", tool_name="mcp__skillbank__run_tests", tool_input={}), store, red)
    record_event(event("SessionEnd", reason="exit"), store, red)
    traj = store.get("claude-abc-1")
    assert traj.task == "fix the failing test"
    assert [(s.kind, s.tool) for s in traj.steps[:3]] == [
        ("message", None),
        ("tool_call", "Edit"),
        ("tool_call", "Bash"),
    ]
    assert traj.steps[2].ok is False
    assert TOKEN not in str(traj.model_dump())
    assert traj.reward == 0.0
    assert (traj.status, traj.outcome) == ("closed", "failure")


def test_tool_events_give_no_context_and_an_unknown_event_stores_nothing(store) -> None:
    red = Redactor()
    assert record_event(event("PostToolUse", tool_name="Read", tool_input={"file_path": "x"}), store, red) is None
    assert record_event(event("Notification", message="hi"), store, red) is None
    assert len(store.get("claude-abc-1").steps) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ('{"session_id": "a"}', "no hook_event_name"),
        ('{"hook_event_name": "SessionStart", "session_id": "../x"}', "not an id"),
    ],
)
def test_input_that_is_not_a_hook_event_is_invalid_input(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_event(text)
