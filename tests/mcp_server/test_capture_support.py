"""Support for the capture tests (no tests here): the real `record_trajectory` tool plus an `echo` tool that is
captured the way the real tool adapters are (`async with deps.capture.tool_call(...)`)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mcp_server.capture import SessionCapture
from mcp_server.deps import Deps
from mcp_server.settings import Settings
from mcp_server.tools import record_trajectory
from mcp_server.toolset import ToolSet
from skills_store.redact import Redactor
from skills_store.trajectories.store import SQLiteTrajectoryStore


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_capture(home: Path, **kwargs) -> tuple[SQLiteTrajectoryStore, SessionCapture]:
    store = SQLiteTrajectoryStore(home / "trajectories.db")
    capture = SessionCapture(store, Redactor(), workspace="/work/demo", repo="me/demo", **kwargs)
    return store, capture


def make_server(home: Path, store: SQLiteTrajectoryStore, capture: SessionCapture) -> MCPServer:
    toolset = ToolSet()
    deps = Deps(
        settings=Settings(home=home),
        workspace=home,
        skills=None,  # type: ignore[arg-type] - these tools never search
        trajectories=store,
        capture=capture,
    )
    record_trajectory.register(toolset, deps)

    @toolset.tool(name="echo", description="Echo the text; a captured stand-in for the real tools.")
    async def echo(
        text: str,
        ctx: Context,
        fail: bool = False,
        reward: float | None = None,
        shown: list[str] | None = None,
    ) -> str:
        async with deps.capture.tool_call(ctx, "echo", {"text": text, "fail": fail}) as call:
            if fail:
                raise ToolError(f"echo refused: {text}")
            call.summary = {"echoed": text[:100]}
            call.skills_shown = shown or []
            call.reward = reward
            return text

    server = MCPServer("skillbank", tools=list(toolset.tools.values()))
    server.middleware.append(toolset.guard())
    return server


@asynccontextmanager
async def serve_http(server: MCPServer, **app_kwargs) -> AsyncIterator[str]:
    """Serve `server` over streamable HTTP on a free loopback port; yields the endpoint URL.

    The socket is bound and listening before the server starts, so clients can connect at once.
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        port = sock.getsockname()[1]
        config = uvicorn.Config(server.streamable_http_app(**app_kwargs), log_level="warning", lifespan="on")
        uv = uvicorn.Server(config)
        async with anyio.create_task_group() as tg:
            tg.start_soon(uv.serve, [sock])
            try:
                yield f"http://127.0.0.1:{port}/mcp"
            finally:
                uv.should_exit = True
