"""Session keys on real transports: streamable HTTP (handshake and 2026-07-28 eras) and stdio subprocesses."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import httpx2
import mcp
import pytest
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

sys.path.insert(0, str(Path(__file__).parent))  # the suite runs with --import-mode=importlib
from test_capture_support import make_capture, make_server, serve_http

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
REPO = Path(__file__).resolve().parents[2]


def _texts(store, traj) -> list[str]:
    return [s.args["text"] for s in store.get(traj.trajectory_id).steps if s.kind == "tool_call"]


async def test_http_sessions_of_the_handshake_era_get_a_trajectory_each_closed_when_they_end(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    server = make_server(tmp_path, store, capture)
    async with serve_http(server) as url:

        async def session(n: int) -> None:
            async with mcp.Client(url, mode="legacy", client_info=Implementation(name=f"agent{n}", version="1")) as c:
                for i in range(4):
                    await c.call_tool("echo", {"text": f"{n}-{i}"})

        async with anyio.create_task_group() as tg:
            for n in range(4):
                tg.start_soon(session, n)
        with anyio.fail_after(30):  # generous: the CI machine is shared
            while any(t.status == "open" for t in store.list()):
                await anyio.wait_all_tasks_blocked()
                await anyio.lowlevel.checkpoint()
    trajs = store.list()
    assert len(trajs) == 4
    for traj in trajs:
        n = traj.source.removeprefix("mcp:agent")
        assert _texts(store, traj) == [f"{n}-{i}" for i in range(4)]
        assert traj.status == "closed"


async def test_stateless_http_requests_share_a_trajectory_only_through_the_session_header(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    server = make_server(tmp_path, store, capture)
    async with serve_http(server) as url:
        long_a, long_b = "S" * 200 + "alice-secret", "S" * 200 + "mallory"  # one prefix: they were cut to it
        for name in ("alpha", "beta", "alpha", long_a, long_b):
            async with (
                httpx2.AsyncClient(headers={"X-Skillbank-Session": name}) as http,
                mcp.Client(streamable_http_client(url, http_client=http)) as client,
            ):
                await client.call_tool("echo", {"text": name})
        async with mcp.Client(url) as plain_a, mcp.Client(url) as plain_b:
            await plain_a.call_tool("echo", {"text": "no header"})
            await plain_b.call_tool("echo", {"text": "no header"})
    by_texts = sorted(_texts(store, t) for t in store.list())
    assert by_texts == sorted([["alpha", "alpha"], ["beta"], ["no header"], ["no header"], [long_a], [long_b]])
    # Nothing can continue a trajectory of one stateless request: it is closed when the request ends.
    assert [t.status for t in store.list() if _texts(store, t) == ["no header"]] == ["closed", "closed"]


async def test_a_stateless_client_retrying_its_closing_call_by_id_gets_the_trajectory_it_closed(tmp_path: Path) -> None:
    store, capture = make_capture(tmp_path)
    server = make_server(tmp_path, store, capture)
    async with serve_http(server) as url, mcp.Client(url) as client:
        opened = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "start"}]})
        tid = opened.structured_content["trajectory_id"]
        closing = {"trajectory_id": tid, "steps": [{"kind": "message", "content": "done"}], "outcome": "success",
                   "final": True}  # fmt: skip
        first = (await client.call_tool("record_trajectory", closing)).structured_content
        retried = await client.call_tool("record_trajectory", closing)
    assert retried.is_error is False
    assert retried.structured_content == {**first, "steps_recorded": 0}
    assert [(t.trajectory_id, t.outcome, t.status) for t in store.list()] == [(tid, "success", "closed")]
    assert store.step_count(tid) == 2


SERVER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from test_capture_support import make_capture, make_server

    home = Path(sys.argv[1])
    store, capture = make_capture(home)
    make_server(home, store, capture).run()
    """
)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_stdio_session_is_one_trajectory(tmp_path: Path, mode: str) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER.format(tests=str(Path(__file__).parent)))
    params = StdioServerParameters(command=sys.executable, args=[str(script), str(tmp_path)], cwd=str(REPO))
    async with mcp.Client(params, mode=mode, client_info=Implementation(name="stdio-agent", version="2")) as client:
        for i in range(3):
            await client.call_tool("echo", {"text": f"s{i}"})
    store, _ = make_capture(tmp_path)
    [traj] = store.list()
    assert traj.source == "mcp:stdio-agent"
    assert _texts(store, traj) == ["s0", "s1", "s2"]
    if mode == "legacy":
        assert traj.status == "closed"
    store.close()
