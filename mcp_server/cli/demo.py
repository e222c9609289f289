"""`skillbank demo`: the whole loop, offline, on a bundled sample repo (see mcp_server/demo)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mcp_server.cli.common import clean_errors, fail, load_settings


def demo(
    out: Annotated[
        Path | None, typer.Option(help="Where to write the tasks, eval and report (default: a new temporary dir).")
    ] = None,
    home: Annotated[
        Path | None, typer.Option(help="Data dir the demo's server records into (default: <out>/eval/home).")
    ] = None,
    n: Annotated[int, typer.Option("--n", min=2, max=20, help="Tasks to synthesize (half are held out).")] = 6,
    seed: Annotated[int, typer.Option(help="Seed of the task order and the held-out split.")] = 0,
) -> None:
    """Synthesize tasks, let a scripted agent solve them over MCP, distill skills, write the eval report."""
    from mcp_server.demo import DemoArgumentError, DemoError, run_demo

    settings = load_settings()
    with clean_errors():
        try:
            run_demo(out, home, n=n, seed=seed, embedder=settings.embedder)
        except DemoArgumentError as exc:
            fail(str(exc), code=2)
        except DemoError as exc:
            fail(f"demo failed: {exc}", code=1)
