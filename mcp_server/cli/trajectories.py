"""`skillbank trajectories list | show ID | export --format jsonl|trl | close-stale`.

A data dir with no trajectories yet is not an error: `list` and `export` print nothing and exit 0, `close-stale`
closes none; `show ID` of an id that is not there is an input error (exit 2). Nothing creates the store here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

import typer

from mcp_server.cli.common import clean_errors, fail, load_settings, refuse_store_path

app = typer.Typer(help="Inspect and export captured trajectories.", no_args_is_help=True)
PAGE = 200


def _open_store() -> AbstractContextManager:
    """The store, or on a fresh data dir an empty one that writes no file (`None` inside the with-block)."""
    from skills_store.trajectories.store import SQLiteTrajectoryStore

    path = load_settings().home / "trajectories.db"
    return SQLiteTrajectoryStore(path) if path.is_file() else nullcontext()


def _short(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


@app.command("list")
def list_(
    status: Annotated[Literal["open", "closed"] | None, typer.Option(help="Only open or closed ones.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="How many, newest first.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List trajectories, newest first."""
    with clean_errors(), _open_store() as store:
        for traj in store.list(status=status, limit=limit) if store else ():
            count = store.step_count(traj.trajectory_id)
            if as_json:
                typer.echo(json.dumps({**traj.model_dump(mode="json", exclude={"steps"}), "steps": count}))
                continue
            reward = "-" if traj.reward is None else f"{traj.reward:.2f}"
            typer.echo(
                f"{traj.trajectory_id:<28} {traj.created_at:%Y-%m-%d %H:%M} {traj.status:<6} "
                f"{traj.outcome or '-':<9} {count:>5} steps  reward {reward:<5} {traj.source or '-':<18} "
                f"{_short(traj.task, 50)}"
            )
        sys.stdout.flush()


@app.command()
def show(
    trajectory_id: Annotated[str, typer.Argument(help="The id, as `list` shows it.")],
    as_json: Annotated[bool, typer.Option("--json", help="The whole trajectory as JSON.")] = False,
) -> None:
    """Show one trajectory and its steps."""
    with clean_errors(), _open_store() as store:
        if store is None:
            fail(f"no trajectory {trajectory_id!r}: none recorded under {load_settings().home} yet")
        traj = store.get(trajectory_id)
    if as_json:
        typer.echo(traj.model_dump_json(indent=2))
        return
    typer.echo(f"{traj.trajectory_id}  {traj.status}  outcome={traj.outcome or '-'}  reward={traj.reward}")
    typer.echo(f"task: {traj.task or '-'}\nsource: {traj.source or '-'}  workspace: {traj.workspace or '-'}")
    typer.echo(f"skills shown: {', '.join(traj.skills_shown) or '-'}")
    for step in traj.steps:
        mark = {True: "ok", False: "FAILED", None: ""}[step.ok]
        head = f"[{step.index}] {step.ts:%H:%M:%S} {step.kind}" + (f" {step.tool}" if step.tool else "")
        typer.echo(f"{head} {mark}".rstrip())
        for label, value in (("args", step.args), ("result", step.result), ("", step.content)):
            if value:
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                typer.echo(f"    {label + ': ' if label else ''}{_short(text, 300)}")


def _all(store, include_open: bool) -> Iterator:
    """Every trajectory, each once: pages come newest first by offset, so one created or closed meanwhile (a
    running server) pushes the rest down and a page begins with some already given; those are skipped."""
    offset, seen = 0, set()
    while True:
        page = store.list(status=None if include_open else "closed", limit=PAGE, offset=offset)
        for traj in page:
            if traj.trajectory_id not in seen:
                seen.add(traj.trajectory_id)
                yield store.get(traj.trajectory_id)
        if len(page) < PAGE:
            return
        offset += PAGE


@app.command()
def export(
    fmt: Annotated[Literal["jsonl", "trl"], typer.Option("--format", help="jsonl: raw; trl: TRL records.")] = "jsonl",
    out: Annotated[Path | None, typer.Option(help="Output file (default: stdout).")] = None,
    include_open: Annotated[bool, typer.Option(help="Also export trajectories that are still open.")] = False,
    min_reward: Annotated[float | None, typer.Option(help="Only trajectories with at least this reward.")] = None,
) -> None:
    """Export closed trajectories as JSONL, or as TRL conversational records with their reward."""
    from skills_store.trajectories.trl_export import ExportStats, export_lines, reward_of

    stats = ExportStats()
    if out is not None:
        home = load_settings().home
        refuse_store_path(out, home)
        if not (home / "trajectories.db").is_file():  # an unset or mistyped SKILLBANK_HOME: keep an earlier export
            typer.echo(f"no trajectories recorded under {home} yet; {out} left as it was", err=True)
            return
    with clean_errors(), _open_store() as store:
        stream = out.open("w", encoding="utf-8") if out else sys.stdout
        try:
            every = _all(store, include_open) if store else iter(())
            trajs = (t for t in every if min_reward is None or (reward_of(t) or 0.0) >= min_reward)
            for line in export_lines(trajs, fmt, stats):
                stream.write(line + "\n")
            stream.flush()  # a reader gone (`| head`) shows here, inside clean_errors, not at interpreter exit
        finally:
            if out:
                stream.close()
    if stats.skipped:
        typer.echo(
            f"skipped {len(stats.skipped)} trajectories with nothing to train on (no prompt or no steps)", err=True
        )
    if out:
        typer.echo(f"wrote {stats.written} trajectories to {out}", err=True)


#: The longest idle time `close-stale` takes, 100 years (`timedelta` cannot hold 1e12 hours, nor inf; the range
#: check refuses nan too).
MAX_IDLE_HOURS = 876_000.0


@app.command("close-stale")
def close_stale(
    idle_hours: Annotated[
        float, typer.Option(min=0.0, max=MAX_IDLE_HOURS, help="Close open ones with no step for this long.")
    ] = 24.0,
) -> None:
    """Close trajectories left open (a crashed client or server) as `abandoned`."""
    with clean_errors(), _open_store() as store:
        closed = store.close_stale(timedelta(hours=idle_hours)) if store else []
    typer.echo(f"closed {len(closed)} trajectories" + (f": {', '.join(closed)}" if closed else ""))
