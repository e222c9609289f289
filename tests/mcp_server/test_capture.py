"""SessionCapture through a real MCP server and in-memory clients: every call is a step, nothing secret is stored."""

from __future__ import annotations

import logging
import sqlite3
import sys
from datetime import timedelta
from pathlib import Path

import anyio
import mcp
import pytest
from mcp_types import Implementation

from skills_store.models import Step, Trajectory

sys.path.insert(0, str(Path(__file__).parent))  # the suite runs with --import-mode=importlib
from test_capture_support import ManualClock, make_capture, make_server

pytestmark = pytest.mark.anyio
AGENT = Implementation(name="pytest-agent", version="1.0")


async def test_every_tool_call_of_a_session_is_a_step_of_one_trajectory(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    server = make_server(tmp_path, store, capture)
    async with mcp.Client(server, client_info=AGENT) as client:
        for word in ("one", "two", "three"):
            assert (await client.call_tool("echo", {"text": word})).is_error is False
    [traj] = store.list()
    assert (traj.source, traj.workspace, traj.repo) == ("mcp:pytest-agent", "/work/demo", "me/demo")
    steps = store.get(traj.trajectory_id).steps
    assert [s.args["text"] for s in steps] == ["one", "two", "three"]
    assert all(s.kind == "tool_call" and s.tool == "echo" and s.ok for s in steps)
    assert steps[0].result == {"echoed": "one"}
    assert all(s.duration_s is not None and s.duration_s >= 0 for s in steps)


async def test_a_failing_call_is_recorded_as_not_ok_and_the_client_still_gets_the_error(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        result = await client.call_tool("echo", {"text": "boom", "fail": True})
    assert result.is_error is True
    assert "echo refused: boom" in result.content[0].text
    [step] = store.get(store.list()[0].trajectory_id).steps
    assert step.ok is False
    assert "echo refused: boom" in step.content


async def test_secrets_in_arguments_and_results_never_reach_the_database(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    secret = "ghp_" + "Z9" * 18
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        await client.call_tool("echo", {"text": f"export GITHUB_TOKEN={secret}"})
        await client.call_tool(
            "record_trajectory",
            {"steps": [{"kind": "observation", "content": f"token is {secret}", "args": {"password": "hunter2!x"}}]},
        )
    store.close()
    con = sqlite3.connect(tmp_path / "trajectories.db")
    dump = "\n".join(con.iterdump())
    con.close()
    assert secret not in dump
    assert "hunter2!x" not in dump
    assert "[REDACTED:" in dump


async def test_concurrent_clients_get_separate_trajectories(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    server = make_server(tmp_path, store, capture)

    async def session(name: str, mode: str) -> None:
        async with mcp.Client(server, mode=mode, client_info=Implementation(name=name, version="1")) as client:
            for i in range(5):
                await client.call_tool("echo", {"text": f"{name}-{i}"})

    async with anyio.create_task_group() as tg:
        for n in range(3):
            tg.start_soon(session, f"modern{n}", "auto")
            tg.start_soon(session, f"legacy{n}", "legacy")
    trajs = store.list()
    assert len(trajs) == 6
    for traj in trajs:
        texts = [s.args["text"] for s in store.get(traj.trajectory_id).steps if s.kind == "tool_call"]
        name = traj.source.removeprefix("mcp:")
        assert texts == [f"{name}-{i}" for i in range(5)]


async def test_skills_shown_are_linked_and_the_reward_is_kept(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        await client.call_tool("echo", {"text": "search", "shown": ["sk-1", "sk-2"]})
        await client.call_tool("echo", {"text": "tests", "reward": 0.4, "shown": ["sk-2", "sk-3"]})
    traj = store.list()[0]
    assert traj.skills_shown == ["sk-1", "sk-2", "sk-3"]
    assert traj.reward == 0.4


async def test_a_session_that_ends_without_final_is_closed_with_an_inferred_outcome(tmp_path: Path) -> None:
    closed: list[Trajectory] = []
    store, capture = make_capture(tmp_path, on_close=[closed.append])
    server = make_server(tmp_path, store, capture)
    async with mcp.Client(server, mode="legacy") as client:
        await client.call_tool("echo", {"text": "run tests", "reward": 1.0})
    async with mcp.Client(server, mode="legacy") as client:
        await client.call_tool("echo", {"text": "just looking"})
    await capture.flush()
    by_text = {t.steps[0].args["text"]: t for t in closed}
    assert by_text["run tests"].outcome == "success"
    assert by_text["just looking"].outcome == "abandoned"
    assert all(t.status == "closed" for t in closed)
    assert "without final=true" in by_text["run tests"].steps[-1].content


async def test_an_on_close_callback_that_raises_is_logged_and_the_others_still_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []

    def broken(traj: Trajectory) -> None:
        raise RuntimeError("confidence update exploded")

    store, capture = make_capture(tmp_path, on_close=[broken, lambda t: seen.append(t.trajectory_id)])
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        result = await client.call_tool("record_trajectory", {"final": True, "outcome": "failure"})
    assert result.is_error is False
    with caplog.at_level(logging.ERROR, logger="mcp_server.capture"):
        await capture.flush()
    assert seen == [result.structured_content["trajectory_id"]]
    assert "confidence update exploded" in caplog.text


async def test_aclose_closes_open_session_trajectories_and_capture_stays_usable(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    server = make_server(tmp_path, store, capture)
    async with mcp.Client(server) as client:
        await client.call_tool("echo", {"text": "a", "reward": 0.5})
        await capture.aclose()
        assert store.list()[0].status == "closed"
        assert store.list()[0].outcome == "failure"
        await client.call_tool("echo", {"text": "b"})
    assert [t.status for t in store.list()] == ["open", "closed"]


async def test_a_session_without_a_connection_is_closed_after_the_idle_period(tmp_path: Path) -> None:
    clock = ManualClock()
    store, capture = make_capture(tmp_path, idle_close_s=600, clock=clock)
    server = make_server(tmp_path, store, capture)
    async with mcp.Client(server) as client:
        await client.call_tool("echo", {"text": "before"})
        clock.now += 601
        await client.call_tool("echo", {"text": "after"})
    newest, oldest = store.list()
    assert (oldest.status, oldest.outcome, newest.status) == ("closed", "abandoned", "open")
    assert "idle for 600 s" in store.get(oldest.trajectory_id).steps[-1].content


async def test_trajectories_left_open_by_a_crashed_server_are_closed_as_stale(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path, stale_after=timedelta(seconds=-1))
    orphan = store.create(source="mcp:crashed").trajectory_id
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        await client.call_tool("echo", {"text": "new session"})
    assert store.get(orphan).status == "closed"
    assert store.get(orphan).outcome == "abandoned"


async def test_a_trajectory_closed_behind_the_session_starts_a_new_one(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        await client.call_tool("echo", {"text": "first"})
        first = store.list()[0].trajectory_id
        store.close_trajectory(first, "success")
        await client.call_tool("echo", {"text": "second"})
    newest = store.list()[0]
    assert newest.trajectory_id != first
    assert [s.args["text"] for s in store.get(newest.trajectory_id).steps] == ["second"]
    assert store.step_count(first) == 1


async def test_record_trajectory_without_an_id_goes_on_in_a_new_one_when_its_own_was_closed_behind_it(
    tmp_path: Path,
) -> None:
    """Another server process on the same home closed this session's trajectory by its id: the session's next
    record_trajectory (no id) starts a new trajectory instead of failing on every retry, and a bare close of the
    closed one answers it as closed."""
    store, capture = make_capture(tmp_path)
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        first = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "a"}]})
        first_id = first.structured_content["trajectory_id"]
        store.close_trajectory(first_id, "success")  # what the other process's close does to the shared database
        again = await client.call_tool("record_trajectory", {"final": True})
        assert again.is_error is False
        assert again.structured_content["trajectory_id"] == first_id
        assert again.structured_content["status"] == "closed"
        second = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "b"}]})
        assert second.is_error is False
        second_id = second.structured_content["trajectory_id"]
        assert second_id != first_id
        assert second.structured_content["status"] == "open"
        named = await client.call_tool(
            "record_trajectory", {"trajectory_id": first_id, "steps": [{"kind": "thought", "content": "c"}]}
        )
        assert named.is_error is True
        assert "is closed" in named.content[0].text
    assert [s.content for s in store.get(first_id).steps] == ["a"]
    assert [s.content for s in store.get(second_id).steps] == ["b"]


async def test_steps_recorded_by_the_agent_land_in_the_same_trajectory_as_its_tool_calls(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        await client.call_tool("echo", {"text": "x"})
        await client.call_tool("record_trajectory", {"steps": [Step(kind="thought", content="hmm").model_dump()]})
    [traj] = store.list()
    assert [s.kind for s in store.get(traj.trajectory_id).steps] == ["tool_call", "thought"]


async def test_an_idle_session_is_closed_by_the_periodic_reap_without_another_call(tmp_path: Path) -> None:
    clock = ManualClock()
    store, capture = make_capture(tmp_path, idle_close_s=600, clock=clock)
    server = make_server(tmp_path, store, capture)
    async with mcp.Client(server) as client:
        await client.call_tool("echo", {"text": "only call"})
        clock.now += 601
        await capture.reap_idle()
        await capture.flush()
        [traj] = store.list()
        assert (traj.status, traj.outcome) == ("closed", "abandoned")


async def test_a_loop_committed_call_commits_from_the_event_loop_and_waits_in_a_thread_only_when_the_db_is_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mcp_server.capture as capture_module

    monkeypatch.setattr(capture_module, "LOOP_COMMITTED_TOOLS", frozenset({"echo"}))
    store, capture = make_capture(tmp_path)
    answers: list[int | None] = []
    try_append = store.try_append

    def spy(*args, **kwargs):
        answers.append(try_append(*args, **kwargs))
        return answers[-1]

    monkeypatch.setattr(store, "try_append", spy)
    other = sqlite3.connect(tmp_path / "trajectories.db", isolation_level=None)
    async with mcp.Client(make_server(tmp_path, store, capture)) as client:
        await client.call_tool("echo", {"text": "idle", "shown": ["sk-1"]})
        other.execute("BEGIN IMMEDIATE")  # another process writing: the step must wait for it, off the loop
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "echo", {"text": "busy"})
            await anyio.sleep(0.3)
            other.execute("COMMIT")
        await client.call_tool("echo", {"text": "idle again"})
    other.close()
    assert answers == [1, None, 3]
    [traj] = store.list()
    assert [s.args["text"] for s in store.get(traj.trajectory_id).steps] == ["idle", "busy", "idle again"]
    assert store.shown_skills(traj.trajectory_id) == ["sk-1"]
