"""`skillbank serve`: the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Literal

import anyio
import typer

from mcp_server.cli.common import cap_torch_threads, clean_errors, fail, load_settings
from mcp_server.deps import ALL_TOOLS, EXEC_TOOLS, unknown_tools
from mcp_server.memory import limit_arenas


def select_tools(transport: str, tools: str | None, allow_exec: bool) -> list[str]:
    if tools is None:
        chosen = list(ALL_TOOLS)
    else:
        chosen = list(dict.fromkeys(t.strip() for t in tools.split(",") if t.strip()))
        if not chosen:  # `--tools ''` or `--tools ,`: a server with no tool, or all of them, is not what was meant
            fail(f"--tools names no tool; name one or more of {', '.join(ALL_TOOLS)}, or leave --tools out for all")
    problem = unknown_tools(chosen)
    if problem:
        fail(f"--tools: {problem}")
    if transport == "http" and not allow_exec:
        asked = [t for t in chosen if t in EXEC_TOOLS]
        if tools and asked:
            fail(f"{', '.join(asked)} execute or write workspace code; over HTTP that needs --allow-exec")
        chosen = [t for t in chosen if t not in EXEC_TOOLS]
    return chosen


def serve(
    transport: Annotated[
        Literal["stdio", "http"], typer.Option(help="stdio for a local agent, http to share.")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP bind address; anything but loopback needs SKILLBANK_TOKEN.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port.")] = 8765,
    workspace: Annotated[Path | None, typer.Option(help="Repository the tools act on (default: cwd).")] = None,
    tools: Annotated[str | None, typer.Option(help="Comma-separated tools to expose (default: all).")] = None,
    allow_exec: Annotated[bool, typer.Option(help="Expose run_tests and apply_patch over HTTP.")] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(help="HTTP: also answer clients that reach this server by this name or IP (repeatable)."),
    ] = None,
    no_skills: Annotated[
        bool, typer.Option("--no-skills", help="Ablation: no search_skills tool, no suggested_skills.")
    ] = False,
) -> None:
    """Run the MCP server."""
    settings = load_settings()
    if no_skills:
        settings = settings.model_copy(update={"no_skills": True})
    if settings.review is None:
        settings = settings.model_copy(update={"review": transport == "http"})
    logging.basicConfig(level=settings.log_level, format="skillbank %(levelname)s %(name)s: %(message)s")
    chosen = select_tools(transport, tools, allow_exec)
    limit_arenas()
    cap_torch_threads()  # before the model loads in the background: its pool sized to this process's cores
    with clean_errors():
        from mcp_server.app import create_server, run_stdio
        from mcp_server.http import check_bind
        from mcp_server.services import build_deps

        token = settings.token.get_secret_value() if settings.token else None
        if transport == "http":
            check_bind(host, token, allowed_host or ())
        deps = build_deps(settings, workspace=workspace, tools=chosen)
        if transport == "stdio":
            run_stdio(create_server(deps))
        else:
            from mcp_server.http import serve_http

            server = create_server(deps)  # the model loads on the first search, never competing with ingest
            anyio.run(lambda: serve_http(server, host=host, port=port, token=token, extra_hosts=allowed_host or ()))
