"""The `skillbank` command line. Settings are read here, once, and passed down.

Each command module imports its heavy dependencies inside the command, so `skillbank --help` and the MCP
handshake stay fast.
"""

from __future__ import annotations

import typer

from mcp_server.cli import serve, skills

app = typer.Typer(
    name="skillbank",
    help="An MCP server that makes coding agents learn from their own work.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("serve")(serve.serve)
app.add_typer(skills.app, name="skills")


def main() -> None:
    app()
