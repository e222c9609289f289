"""The `skillbank` command line. Settings are read here, once, and passed down."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="skillbank",
    help="An MCP server that makes coding agents learn from their own work.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def main() -> None:
    app()
