"""`skillbank hook claude`: the Claude Code hook (event JSON on stdin; see claude_settings.example.json).

Kept light: it imports no MCP SDK and no model, so each hook call costs a Python start and a few SQLite writes.
"""

from __future__ import annotations

import sys

import typer

from mcp_server.cli.common import load_settings

app = typer.Typer(
    help="Hooks that capture agent sessions as trajectories and bring skills to them.", no_args_is_help=True
)


@app.callback()
def hooks() -> None:
    """Hooks that agents run on their own events."""


@app.command()
def claude() -> None:
    """Claude Code hook for SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure and SessionEnd."""
    raise typer.Exit(_run_claude())


def _run_claude() -> int:
    from mcp_server.claude_hook import run

    settings = load_settings()
    return run(
        sys.stdin.read(),
        home=settings.home,
        redact_patterns=settings.redact_patterns,
        out=sys.stdout,
        err=sys.stderr,
        threshold=settings.suggest_threshold,
    )


def claude_main() -> None:
    """`skillbank hook claude` without building the whole CLI (the fast path `mcp_server.cli.main` takes)."""
    try:
        code = _run_claude()
    except typer.Exit as exc:  # bad settings: `fail` printed the message already
        code = exc.exit_code
    sys.exit(code)
