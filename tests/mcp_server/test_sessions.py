"""Sessions never mix: concurrent stateless HTTP clients with one name keep their own trajectories, a trajectory is
written only through the id the server returned, a repeated close opens nothing new, and used_skills is stored."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import mcp
import pytest
from mcp_types import Implementation

sys.path.insert(0, str(Path(__file__).parent))  # the suite runs with --import-mode=importlib
from test_capture_support import make_capture, make_server, serve_http

from skills_store.trajectories.summaries import used_skills

pytestmark = pytest.mark.anyio

CLIENTS = 8
STEPS = 1_000
BATCH = 250


@pytest.fixture
def env(tmp_path: Path):
    store, capture = make_capture(tmp_path)
    yield store, make_server(tmp_path, store, capture)
    store.close()


async def test_eight_stateless_clients_with_one_name_keep_their_steps_apart(env) -> None:
    store, server = env
    ids: dict[int, str] = {}

    async def agent(n: int, url: str) -> None:
        info = Implementation(name="same-agent", version="1.0")
        async with mcp.Client(url, client_info=info) as client:
            tid = None
            for start in range(0, STEPS, BATCH):
                steps = [{"kind": "thought", "content": f"{n}:{i}"} for i in range(start, start + BATCH)]
                args = {"steps": steps} if tid is None else {"steps": steps, "trajectory_id": tid}
                result = await client.call_tool("record_trajectory", args)
                assert not result.is_error, result.content
                tid = result.structured_content["trajectory_id"]
            closed = await client.call_tool("record_trajectory", {"trajectory_id": tid, "final": True})
            assert closed.structured_content["status"] == "closed"
            ids[n] = tid

    with anyio.fail_after(120):
        async with serve_http(server) as url, anyio.create_task_group() as tg:
            for n in range(CLIENTS):
                tg.start_soon(agent, n, url)
    assert len(set(ids.values())) == CLIENTS
    assert len(store.list()) == CLIENTS
    for n, tid in ids.items():
        traj = store.get(tid)
        assert [s.content for s in traj.steps] == [f"{n}:{i}" for i in range(STEPS)]
        assert traj.status == "closed"


async def test_a_stateless_request_without_an_id_never_joins_another_clients_trajectory(env) -> None:
    store, server = env
    async with serve_http(server) as url, mcp.Client(url) as first, mcp.Client(url) as second:
        a = await first.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "mine"}]})
        b = await second.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "yours"}]})
    assert a.structured_content["trajectory_id"] != b.structured_content["trajectory_id"]
    assert sorted(len(store.get(t.trajectory_id).steps) for t in store.list()) == [1, 1]


async def test_a_stateless_close_without_an_id_is_refused_and_opens_nothing(env) -> None:
    store, server = env
    async with serve_http(server) as url, mcp.Client(url) as client:
        result = await client.call_tool("record_trajectory", {"final": True, "outcome": "success"})
    assert result.is_error
    assert "pass the trajectory_id your first record_trajectory call returned" in result.content[0].text
    assert store.list() == []


async def test_an_id_the_server_never_returned_is_refused(env) -> None:
    store, server = env
    async with mcp.Client(server) as client:
        result = await client.call_tool(
            "record_trajectory", {"trajectory_id": "traj-0000000000000000", "steps": [{"kind": "thought"}]}
        )
    assert result.is_error
    assert "no trajectory 'traj-0000000000000000'" in result.content[0].text
    assert store.list() == []


async def test_closing_twice_without_an_id_opens_no_new_trajectory_and_keeps_the_first_outcome(env) -> None:
    store, server = env
    async with mcp.Client(server) as client:
        await client.call_tool("echo", {"text": "work"})
        first = await client.call_tool("record_trajectory", {"final": True, "outcome": "success"})
        again = await client.call_tool("record_trajectory", {"final": True, "outcome": "success"})
        other = await client.call_tool("record_trajectory", {"final": True, "outcome": "failure"})
        bare = await client.call_tool("record_trajectory", {"final": True})
    assert not again.is_error, again.content
    assert again.structured_content == {**first.structured_content, "steps_recorded": 0}
    assert other.is_error
    assert "already closed with outcome 'success'" in other.content[0].text
    assert "'failure' was not recorded" in other.content[0].text
    assert bare.structured_content == again.structured_content
    [traj] = store.list()
    assert traj.outcome == "success"


async def test_used_skills_are_stored_redacted_and_read_back_by_the_accessor(env) -> None:
    store, server = env
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    async with mcp.Client(server) as client:
        await client.call_tool("record_trajectory", {"used_skills": ["sk-001", "starter-key-error"]})
        done = await client.call_tool(
            "record_trajectory", {"used_skills": ["sk-001", token], "final": True, "outcome": "success"}
        )
    traj = store.get(done.structured_content["trajectory_id"])
    found = used_skills(traj)
    assert found[:2] == ["sk-001", "starter-key-error"]
    assert len(found) == 3
    assert token not in str(traj.model_dump())


@pytest.mark.parametrize(
    ("used", "expected"),
    [
        (["Fix the import, then rerun"], "send skill_id values exactly as search_skills returned them"),
        ([f"sk-{i}" for i in range(51)], "name at most 50 skills"),
        ("sk-001", "Input should be a valid list"),
    ],
)
async def test_bad_used_skills_are_refused_with_what_to_send(env, used, expected: str) -> None:
    store, server = env
    async with mcp.Client(server) as client:
        result = await client.call_tool("record_trajectory", {"used_skills": used, "final": True})
    assert result.is_error
    assert "argument 'used_skills" in result.content[0].text
    assert expected in result.content[0].text
    assert store.list() == []


async def test_used_skills_the_session_was_not_shown_are_named_in_the_result_and_the_step(env) -> None:
    """An outcome credits only skills the session was shown: the agent learns which of its names will not count."""
    store, server = env
    async with mcp.Client(server) as client:
        first = await client.call_tool("record_trajectory", {"used_skills": ["sk-never"]})
        tid = first.structured_content["trajectory_id"]
        store.append(tid, [], shown_skills=["sk-shown"])  # what a captured search_skills links
        second = await client.call_tool(
            "record_trajectory", {"used_skills": ["sk-shown", "sk-other"], "final": True, "outcome": "success"}
        )
        again = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "next"}]})
    assert first.structured_content["not_shown_skills"] == ["sk-never"]
    assert second.structured_content["not_shown_skills"] == ["sk-other"]
    assert "not_shown_skills" not in again.structured_content
    texts = [s.content for s in store.get(tid).steps if s.tool == "record_trajectory"]
    assert texts[-1].endswith("not shown in this session, so an outcome does not credit: sk-other")
    assert used_skills(store.get(tid))[-2:] == ["sk-shown", "sk-other"]
