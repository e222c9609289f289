"""`skillbank demo`: the whole loop, offline, on a bundled sample repo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mcp_server.cli.common import clean_errors


def demo(
    home: Annotated[
        Path | None, typer.Option(help="Data dir to use and keep (default: a temporary one, removed after).")
    ] = None,
) -> None:
    """Run two scripted agent sessions against the real server, distill a skill, and see it used."""
    from mcp_server.demo import run_demo

    with clean_errors():
        run_demo(home)
