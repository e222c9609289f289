"""Trajectories as training data: JSONL and TRL conversational records with a reward."""

from __future__ import annotations

import json

import pytest

from skills_store.errors import InvalidInput
from skills_store.models import StoredStep, Trajectory, utcnow
from skills_store.trajectories.closing import NOTE_TOOL
from skills_store.trajectories.trl_export import ExportStats, export_lines, reward_of, to_trl


def _traj(**fields) -> Trajectory:
    steps = [
        StoredStep(index=0, ts=utcnow(), kind="message", content="make the parser keep the last line"),
        StoredStep(index=1, ts=utcnow(), kind="thought", content="look at parse()"),
        StoredStep(
            index=2, ts=utcnow(), kind="tool_call", tool="run_tests", args={"tests": ["t.py"]},
            result={"status": "failed", "failed": 1}, ok=True,
        ),
        StoredStep(index=3, ts=utcnow(), kind="tool_call", tool="apply_patch", args={"patch": "..."}, ok=False,
                   content="PatchError: hunk 1 does not match"),
        StoredStep(index=4, ts=utcnow(), kind="action", content="rewrite the loop"),
        StoredStep(index=5, ts=utcnow(), kind="observation", content="3 passed"),
    ]  # fmt: skip
    return Trajectory(trajectory_id="traj-1", status="closed", steps=steps, **fields)


def test_trl_records_are_prompt_completion_conversations_with_the_reward() -> None:
    record = to_trl(_traj(task="fix the parser", outcome="success", reward=0.85, source="mcp:x"))
    assert record["prompt"] == [{"role": "user", "content": "fix the parser"}]
    roles = [m["role"] for m in record["completion"]]
    assert roles == ["user", "assistant", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    call = record["completion"][2]["tool_calls"][0]
    assert call["function"] == {"name": "run_tests", "arguments": {"tests": ["t.py"]}}
    answer = record["completion"][3]
    assert answer["tool_call_id"] == call["id"]
    assert json.loads(answer["content"]) == {"failed": 1, "status": "failed"}
    assert record["completion"][5]["content"] == "PatchError: hunk 1 does not match"
    assert (record["reward"], record["outcome"], record["trajectory_id"]) == (0.85, "success", "traj-1")


def test_without_a_task_the_first_user_message_is_the_prompt() -> None:
    record = to_trl(_traj(outcome="failure"))
    assert record["prompt"] == [{"role": "user", "content": "make the parser keep the last line"}]
    assert record["completion"][0]["role"] == "assistant"
    assert record["reward"] == 0.0


@pytest.mark.parametrize(
    ("fields", "expected"),
    [({"reward": 0.3, "outcome": "success"}, 0.3), ({"outcome": "success"}, 1.0), ({"outcome": "abandoned"}, None)],
)
def test_the_reward_is_run_tests_reward_else_the_outcome(fields, expected) -> None:
    assert reward_of(_traj(**fields)) == expected


def test_jsonl_lines_round_trip_to_the_same_trajectory() -> None:
    traj = _traj(task="t", outcome="success")
    [line] = export_lines([traj], "jsonl")
    assert Trajectory.model_validate_json(line) == traj


def test_an_unknown_export_format_is_refused() -> None:
    with pytest.raises(InvalidInput, match="use one of jsonl, trl"):
        list(export_lines([_traj()], "csv"))  # type: ignore[arg-type]


def _note(index: int, content: str, tool: str | None = NOTE_TOOL) -> StoredStep:
    return StoredStep(index=index, ts=utcnow(), kind="observation", tool=tool, content=content)


def test_the_servers_closing_note_never_becomes_the_prompt() -> None:
    steps = [
        StoredStep(index=0, ts=utcnow(), kind="tool_call", tool="run_tests", result={"status": "failed"}, ok=False),
        _note(1, "session ended (the client disconnected) without final=true; outcome failure: inferred"),
    ]
    assert to_trl(Trajectory(trajectory_id="t", status="closed", steps=steps, outcome="failure")) is None


def test_untagged_closing_notes_stored_before_the_tag_are_recognised_too() -> None:
    legacy = "Claude Code session ended (logout); outcome abandoned: no outcome was set and no tests were run"
    steps = [
        _note(0, legacy, tool=None),
        StoredStep(index=1, ts=utcnow(), kind="message", content="make the parser keep the last line"),
        StoredStep(index=2, ts=utcnow(), kind="action", content="rewrite the loop"),
    ]
    record = to_trl(Trajectory(trajectory_id="t", status="closed", steps=steps))
    assert record is not None
    assert record["prompt"] == [{"role": "user", "content": "make the parser keep the last line"}]
    assert all(legacy not in json.dumps(m) for m in record["completion"])


def test_trajectories_with_nothing_to_train_on_are_skipped_and_counted() -> None:
    empty_with_task = Trajectory(trajectory_id="no-steps", status="closed", task="port to v2", outcome="failure")
    only_a_note = Trajectory(
        trajectory_id="only-note", status="closed", steps=[_note(0, "session ended (idle); outcome abandoned: x")]
    )
    stats = ExportStats()
    lines = list(export_lines([empty_with_task, _traj(task="t"), only_a_note], "trl", stats))
    assert [json.loads(line)["trajectory_id"] for line in lines] == ["traj-1"]
    assert (stats.written, stats.skipped) == (1, ["no-steps", "only-note"])
    raw = ExportStats()
    assert len(list(export_lines([empty_with_task, only_a_note], "jsonl", raw))) == 2  # raw export keeps everything
    assert raw.skipped == []
