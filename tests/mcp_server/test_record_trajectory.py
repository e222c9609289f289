"""The `record_trajectory` tool contract: steps, task, outcome, final, trajectory_id, and clear refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import mcp
import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the suite runs with --import-mode=importlib
from test_capture_support import make_capture, make_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def env(tmp_path: Path):
    store, capture = make_capture(tmp_path)
    yield store, make_server(tmp_path, store, capture)
    store.close()


async def test_steps_task_and_outcome_are_recorded_and_final_closes(env) -> None:
    store, server = env
    async with mcp.Client(server) as client:
        first = await client.call_tool(
            "record_trajectory",
            {
                "steps": [
                    {"kind": "thought", "content": "the parser drops the last line"},
                    {"kind": "action", "content": "edit parse()", "tool": "editor", "args": {"file": "p.py"}},
                ],
                "task": "fix the parser",
            },
        )
        assert first.is_error is False
        assert first.structured_content == {
            "trajectory_id": first.structured_content["trajectory_id"],
            "steps_recorded": 2,
            "total_steps": 2,
            "status": "open",
        }
        last = await client.call_tool(
            "record_trajectory",
            {
                "steps": [{"kind": "observation", "content": "tests pass", "ok": True}],
                "outcome": "success",
                "final": True,
            },
        )
    assert last.structured_content["status"] == "closed"
    assert last.structured_content["total_steps"] == 3
    assert "closed" in last.content[0].text
    traj = store.get(first.structured_content["trajectory_id"])
    assert (traj.task, traj.outcome, traj.status) == ("fix the parser", "success", "closed")
    assert traj.steps[1].args == {"file": "p.py"}


async def test_after_final_the_session_continues_in_a_new_trajectory(env) -> None:
    _, server = env
    async with mcp.Client(server) as client:
        closed = await client.call_tool("record_trajectory", {"final": True, "outcome": "failure"})
        reopened = await client.call_tool("record_trajectory", {"steps": [{"kind": "message", "content": "again"}]})
    assert closed.structured_content["trajectory_id"] != reopened.structured_content["trajectory_id"]
    assert reopened.structured_content["status"] == "open"


async def test_a_retried_closing_call_answers_with_the_trajectory_it_closed_and_other_work_is_new(env) -> None:
    store, server = env
    closing = {"steps": [{"kind": "message", "content": "done", "ts": "2026-12-04T10:00:00Z"}], "task": "fix it",
               "outcome": "success", "final": True}  # fmt: skip
    retry = {**closing, "steps": [{"kind": "message", "content": "done", "ts": "2026-12-04T10:00:09Z"}]}
    other = {**closing, "steps": [{"kind": "message", "content": "the next task, done"}], "outcome": "failure"}
    async with mcp.Client(server) as client:
        first = (await client.call_tool("record_trajectory", closing)).structured_content
        again = (await client.call_tool("record_trajectory", retry)).structured_content
        new = (await client.call_tool("record_trajectory", other)).structured_content
    assert again == {**first, "steps_recorded": 0}
    assert new["trajectory_id"] != first["trajectory_id"]
    assert new["steps_recorded"] == 1
    assert [(t.outcome, t.status) for t in store.list(limit=10)] == [("failure", "closed"), ("success", "closed")]
    assert len(store.get(first["trajectory_id"]).steps) == 1


async def test_a_retried_closing_call_naming_its_trajectory_answers_with_it_and_a_different_one_is_refused(env) -> None:
    store, server = env
    async with mcp.Client(server) as client:
        opened = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "start"}]})
        tid = opened.structured_content["trajectory_id"]
        closing = {"trajectory_id": tid, "steps": [{"kind": "message", "content": "done"}], "outcome": "success",
                   "final": True}  # fmt: skip
        first = (await client.call_tool("record_trajectory", closing)).structured_content
        retried = await client.call_tool("record_trajectory", closing)
        bare = await client.call_tool("record_trajectory", {"trajectory_id": tid, "final": True})
        without_id = await client.call_tool(
            "record_trajectory", {k: v for k, v in closing.items() if k != "trajectory_id"}
        )
        more = await client.call_tool(
            "record_trajectory", {**closing, "steps": [{"kind": "message", "content": "one more thing"}]}
        )
        other_outcome = await client.call_tool("record_trajectory", {"trajectory_id": tid, "final": True,
                                                                     "outcome": "failure"})  # fmt: skip
    assert first["status"] == "closed"
    assert retried.is_error is False
    assert retried.structured_content == {**first, "steps_recorded": 0}
    assert bare.is_error is False
    assert bare.structured_content == {**first, "steps_recorded": 0}
    assert without_id.is_error is False
    assert without_id.structured_content == {**first, "steps_recorded": 0}
    assert more.is_error is True
    assert "is closed and cannot be written to" in more.content[0].text
    assert other_outcome.is_error is True
    assert "already closed with outcome 'success'" in other_outcome.content[0].text
    assert [(t.trajectory_id, t.outcome) for t in store.list(limit=10)] == [(tid, "success")]
    assert [s.content for s in store.get(tid).steps] == ["start", "done"]


async def test_an_explicit_trajectory_id_writes_to_that_trajectory(env) -> None:
    store, server = env
    other = store.create(source="claude-code").trajectory_id
    async with mcp.Client(server) as client:
        result = await client.call_tool(
            "record_trajectory", {"trajectory_id": other, "steps": [{"kind": "thought", "content": "x"}]}
        )
    assert result.structured_content["trajectory_id"] == other
    assert store.step_count(other) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"trajectory_id": "traj-nope", "steps": [{"kind": "thought", "content": "x"}]}, "no trajectory 'traj-nope'"),
        ({"steps": [{"kind": "dream", "content": "x"}]}, "thought"),
        ({"steps": [{"kind": "thought", "content": "x", "mood": "sad"}]}, "mood"),
        ({"outcome": "meh"}, "success"),
        ({"steps": [{"kind": "thought", "content": "x"}] * 1001}, "1000"),
    ],
)
async def test_bad_requests_are_tool_errors_that_say_what_to_change_and_store_nothing(env, args, message) -> None:
    store, server = env
    async with mcp.Client(server) as client:
        result = await client.call_tool("record_trajectory", args)
    assert result.is_error is True
    assert message in result.content[0].text
    assert all(store.step_count(t.trajectory_id) == 0 for t in store.list())


async def test_an_oversized_step_is_a_tool_error_and_nothing_of_the_call_is_stored(env) -> None:
    store, server = env
    huge = "x" * 2_100_000
    async with mcp.Client(server) as client:
        await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "kept"}]})
        result = await client.call_tool(
            "record_trajectory",
            {
                "steps": [
                    {"kind": "thought", "content": "fine"},
                    {"kind": "observation", "content": "y", "result": huge},
                ]
            },
        )
    assert result.is_error is True
    assert "step 1 (observation)" in result.content[0].text
    assert "limit" in result.content[0].text
    [traj] = store.list()
    assert [s.content for s in store.get(traj.trajectory_id).steps] == ["kept"]


async def test_writing_to_a_closed_trajectory_is_a_tool_error_and_closing_it_again_answers_with_it(env) -> None:
    store, server = env
    done = store.create().trajectory_id
    store.close_trajectory(done, "success")
    async with mcp.Client(server) as client:
        result = await client.call_tool(
            "record_trajectory", {"trajectory_id": done, "steps": [{"kind": "thought", "content": "late"}]}
        )
        final_again = await client.call_tool("record_trajectory", {"trajectory_id": done, "final": True})
    assert result.is_error is True
    assert "is closed" in result.content[0].text
    assert final_again.is_error is False
    assert final_again.structured_content == {"trajectory_id": done, "steps_recorded": 0, "total_steps": 0,
                                              "status": "closed"}  # fmt: skip
    assert store.step_count(done) == 0


async def test_the_tool_schema_lists_the_step_kinds_and_outcomes(env) -> None:
    _, server = env
    async with mcp.Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = str(tools["record_trajectory"].input_schema)
    for word in ("thought", "action", "observation", "tool_call", "message", "success", "abandoned", "final"):
        assert word in schema
    assert tools["record_trajectory"].output_schema is not None
