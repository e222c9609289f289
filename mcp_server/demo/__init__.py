"""`skillbank demo`: the whole evolve loop offline on a bundled sample repository (the steps are in `loop.py`)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from mcp_server.demo.loop import HARNESS_LABEL, DemoArgumentError, DemoError, DemoResult, Steps, run_loop

__all__ = ["CONNECT", "HARNESS_LABEL", "DemoArgumentError", "DemoError", "DemoResult", "run_demo"]

CONNECT = """\
Connect your own agent (stdio; the server runs in your repository). skillbank writes the config itself:
  skillbank install claude|codex|cline [--workspace DIR]    (skillbank uninstall CLIENT removes it)
or by hand:
  Claude Code  claude mcp add skillbank -- {exe} serve --workspace .
               hooks that capture Claude's own tool calls: see claude_settings.example.json
  Cline        cline_mcp_settings.json: {{"mcpServers": {{"skillbank": {{"command": "{exe}",
               "args": ["serve", "--workspace", "/path/to/repo"]}}}}}}
  Codex        ~/.codex/config.toml: [mcp_servers.skillbank]
               command = "{exe}"
               args = ["serve", "--workspace", "/path/to/repo"]
"""


def run_demo(
    out: Path | None = None,
    home: Path | None = None,
    *,
    n: int = 6,
    seed: int = 0,
    embedder: str = "minilm",
    console: Console | None = None,
) -> DemoResult:
    """Run the loop into `out` (default: a new temporary dir, kept so the report can be opened)."""
    console = console or Console(soft_wrap=True)
    if out is not None and out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DemoArgumentError(f"--out {out} exists and is not an empty directory; pick a new one")
    if home is not None and out is not None and home.resolve().is_relative_to(out.resolve()):
        raise DemoArgumentError(f"--home {home} must not be inside --out {out}")
    if home is not None:
        check_home_embedder(home, embedder)
    out = out or Path(tempfile.mkdtemp(prefix="skillbank-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    steps = Steps(console)
    console.print("[bold]skillbank demo[/]: the whole loop, offline: tasks -> agent over MCP -> trajectories -> "
                  "skills -> eval report.")  # fmt: skip
    console.print(f"artifacts in {out}" + ("" if home is None else f"; data dir {home}"), markup=False)
    try:
        result = run_loop(steps, out, home, n=n, seed=seed, embedder=embedder)
    finally:
        steps.end()
    steps.begin("Step 5/5: connect Claude Code, Cline or Codex")
    console.print(CONNECT.format(exe=_exe()), markup=False, highlight=False)
    steps.end()
    result.timings = steps.timings
    console.print(
        "[bold]timings[/]: " + ", ".join(f"{t.split(':')[0]} {s:.1f} s" for t, s in steps.timings.items())
        + f"; total {steps.total:.1f} s"
    )  # fmt: skip
    return result


def check_home_embedder(home: Path, embedder: str) -> None:
    """Refuse (`DemoArgumentError`, before anything runs) a `--home` whose skills another embedder made: the demo's
    server could not open that bank, searched nothing through step 2 and the demo failed after it, naming
    `<out>/eval/home` rather than the `--home` given."""
    from skills_store.catalog import Catalog
    from skills_store.embedders.specs import build_inner

    path = home / "catalog.db"
    if not path.is_file():
        return
    with Catalog(path, readonly=True) as catalog:
        stored = catalog.get_meta("embedder") if catalog.count() else None
    built = build_inner(embedder)  # names the model; loads nothing
    wanted = f"{built.name}:{built.dim}"
    if stored is not None and stored != wanted:
        raise DemoArgumentError(
            f"--home {home}: its skills were embedded with {stored}, and this demo would use {wanted} "
            f"(SKILLBANK_EMBEDDER={embedder}); set SKILLBANK_EMBEDDER to the embedder they were built with, or pick "
            "another --home"
        )


def _exe() -> str:
    return shutil.which("skillbank") or str(Path(sys.executable).with_name("skillbank"))
