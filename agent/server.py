"""The skillbank MCP server as the agent sees it: a `skillbank serve` subprocess over stdio, like any other client.

`agent/` never imports `mcp_server`; it spawns the server for one workspace and talks MCP to it, so the bundled
agent crosses the same boundary Claude Code does, and its calls are captured by the same code.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastmcp.client.transports import StdioTransport
from mcp_types import Implementation
from pydantic_ai.mcp import MCPToolset

from skills_store.errors import ConfigError

#: Tools the model never calls itself: the harness records the trajectory.
HARNESS_ONLY = frozenset({"record_trajectory"})
#: How the agent introduces itself: trajectories get `source = mcp:skillbank-agent`.
CLIENT = Implementation(name="skillbank-agent", version="0.1.0")
#: run_tests may run for its full 600 s default, plus start-up.
READ_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class ServerCommand:
    """How to start `skillbank serve`: the command, leading arguments, and the environment it gets."""

    command: str
    """The executable, e.g. `/venv/bin/skillbank`."""
    args: tuple[str, ...] = ()
    """Arguments before `serve` (e.g. `("-m", "mcp_server")` when `command` is a Python interpreter)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The server's whole environment (the stdio transport passes only a safe subset otherwise):
    `SKILLBANK_HOME` and the other `SKILLBANK_*` settings belong here."""

    @classmethod
    def default(cls, env: Mapping[str, str] | None = None) -> ServerCommand:
        """The `skillbank` next to this interpreter (or on PATH), with `env` (default: this process's)."""
        beside = Path(sys.executable).with_name("skillbank")
        exe = str(beside) if beside.exists() else shutil.which("skillbank")
        if exe is None:
            raise ConfigError("the skillbank command is not installed next to this Python nor on PATH")
        return cls(exe, (), dict(os.environ if env is None else env))

    def argv(self, workspace: Path) -> list[str]:
        return [*self.args, "serve", "--workspace", str(workspace)]


#: Settings that name a path: relative ones are resolved in this process's cwd before the server gets them.
PATH_SETTINGS = ("SKILLBANK_HOME", "SKILLBANK_WORKSPACE")
#: Settings that name a program: made absolute when given as a path, left for PATH when a bare name.
PROGRAM_SETTINGS = ("SKILLBANK_TEST_PYTHON",)


def absolute_program(program: str) -> str:
    """`.venv/bin/python` or `~/py/bin/python` made absolute against this process's cwd; `python3` left as it is."""
    if os.sep in program or program.startswith("~"):
        return str(Path(program).expanduser().absolute())
    return program


def pinned_paths(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with its relative path settings made absolute here.

    The server runs with the workspace as its cwd, where `SKILLBANK_HOME=data` would name `<workspace>/data`: the
    agent's and the eval's data would be recorded into the repository under test (and be visible to its tests).
    """
    out = dict(env)
    for key in PATH_SETTINGS:
        if out.get(key):
            out[key] = str(Path(out[key]).expanduser().absolute())
    for key in PROGRAM_SETTINGS:
        if out.get(key):
            out[key] = absolute_program(out[key])
    return out


def skillbank_toolset(
    server: ServerCommand, workspace: Path, *, use_skills: bool, log_file: Path | None = None, process_tool_call: Any
) -> MCPToolset[Any]:
    """An `MCPToolset` that spawns the server for `workspace` on entry and stops it on exit.

    With `use_skills=False` the server runs with `SKILLBANK_NO_SKILLS=1` (no `search_skills`, no
    `suggested_skills`); the tool is also filtered out here so the ablation holds whatever the server version.
    """
    env = pinned_paths(server.env)  # the server's cwd is the workspace, not ours
    if not use_skills:
        env["SKILLBANK_NO_SKILLS"] = "1"
    transport = StdioTransport(
        server.command, server.argv(workspace), env=env, cwd=str(workspace), keep_alive=False, log_file=log_file
    )
    return MCPToolset(
        transport,
        id="skillbank",
        tool_error_behavior="failed",
        process_tool_call=process_tool_call,
        client_info=CLIENT,
        init_timeout=120.0,
        read_timeout=READ_TIMEOUT_S,
    )


def model_tools(toolset: MCPToolset[Any], *, use_skills: bool) -> Any:
    """The server's tools the model may call: all but the harness's own, and no `search_skills` in the ablation."""
    hidden = HARNESS_ONLY if use_skills else HARNESS_ONLY | {"search_skills"}
    return toolset.filtered(lambda _ctx, tool: tool.name not in hidden)
