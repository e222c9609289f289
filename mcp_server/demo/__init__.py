"""`skillbank demo`: the whole loop on a bundled sample repository (see `loop.py`)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import anyio
from rich.console import Console

from mcp_server.demo.loop import (
    FIX_CATALOG,
    FIX_ORDERS,
    Narrator,
    confidence_of,
    distill,
    prepare_workspace,
    session,
)
from mcp_server.settings import Settings

CONNECT = """\
Connect your own agent (stdio; the server runs in your repository):
  Claude Code  claude mcp add skillbank -- {exe} serve --workspace .
               hooks that capture Claude's own tool calls: see claude_settings.example.json
  Cline        cline_mcp_settings.json: {{"mcpServers": {{"skillbank": {{"command": "{exe}",
               "args": ["serve", "--workspace", "/path/to/repo"]}}}}}}
  Codex        ~/.codex/config.toml: [mcp_servers.skillbank]
               command = "{exe}"
               args = ["serve", "--workspace", "/path/to/repo"]
"""


def run_demo(home: Path | None = None, *, console: Console | None = None) -> None:
    console = console or Console(soft_wrap=True)
    with tempfile.TemporaryDirectory(prefix="skillbank-demo-") as tmp:
        data = home or Path(tmp) / "home"
        settings = Settings(home=data, workspace=Path(tmp))
        narrator = Narrator(console)
        started = time.perf_counter()
        console.print("[bold]skillbank demo[/]: the whole loop, offline, with a scripted agent (no LLM).")
        console.print(f"data dir {data} (a new store starts with the 44-skill starter pack)\n")

        console.print("[bold]Session 1[/]: an agent makes the catalog loader read a spreadsheet export")
        ws1 = prepare_workspace(Path(tmp) / "session-1")
        traj1, _, _ = anyio.run(
            lambda: session(
                narrator, data, ws1, task="Load prices from the spreadsheet export", tests=["tests/test_catalog.py"],
                patch=FIX_CATALOG,
            )
        )  # fmt: skip

        console.print("\n[bold]Distill[/]: closed trajectories -> skills (heuristic distiller, offline)")
        learned = distill(settings, narrator)
        before = confidence_of(settings, learned)

        console.print("\n[bold]Session 2[/]: another agent, same repository, a new failure in the orders module")
        ws2 = prepare_workspace(Path(tmp) / "session-2")
        _, failing, searched = anyio.run(
            lambda: session(
                narrator, data, ws2, task="Total an order from the spreadsheet export", tests=["tests/test_orders.py"],
                patch=FIX_ORDERS,
            )
        )  # fmt: skip
        suggested = [s["skill_id"] for s in failing.get("suggested_skills") or []]
        relevance = {s["skill_id"]: s.get("relevance", 0.0) for s in searched}
        shown = [sid for sid in learned if sid in suggested or sid in relevance]
        after = confidence_of(settings, learned)

        console.print("\n[bold]What was learned[/]")
        if shown:
            for sid in shown:
                how = (
                    "as a suggested skill of run_tests"
                    if sid in suggested
                    else f"through search_skills (relevance {relevance[sid]:.2f}, under the suggestion threshold)"
                )
                console.print(
                    f"  the lesson of session 1 ({traj1}) reached session 2 {how}: [{sid}]; "
                    f"confidence {before[sid]:.2f} -> {after[sid]:.2f} after session 2 succeeded",
                    markup=False,
                )
        else:
            console.print(f"  session 2 was not shown the lesson of session 1 ({', '.join(learned) or 'none'})")
        console.print(f"  total {time.perf_counter() - started:.0f} s\n")
        console.print(CONNECT.format(exe=_exe()), markup=False)


def _exe() -> str:
    import shutil
    import sys

    return shutil.which("skillbank") or str(Path(sys.executable).with_name("skillbank"))
