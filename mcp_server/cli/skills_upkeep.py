"""`skillbank skills reindex | prune | dedupe | approve | reject`: upkeep of the skill bank (on `skills.app`).

`approve ID` makes a candidate skill (distilled under `SKILLBANK_REVIEW`) active; `reject ID` deletes it. An
unknown id, or rejecting a skill that is not a candidate, is an input error (exit 2).

Like the read-only commands, they create nothing on a fresh data dir: they say there is no bank yet and exit 0.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from mcp_server.cli.common import (
    bank_exists,
    cap_torch_threads,
    clean_errors,
    fail,
    load_settings,
    no_bank,
    open_bank_cli,
    open_catalog,
    refuse_archive_path,
)

console = Console(markup=False, emoji=False)
"""Skill text is data: a title is never read as rich markup (`[/bold]`) or an emoji code."""


def reindex(
    reembed: Annotated[bool, typer.Option(help="Also embed every skill again (after changing the embedder).")] = False,
) -> None:
    """Rebuild the catalog (keyword index, filters) from the Chroma store."""
    from mcp_server.services import open_bank

    settings = load_settings()
    # A lost catalog.db is what reindex is for: the Chroma store alone is enough to rebuild it from.
    if not (settings.chroma_url is None and (settings.home / "chroma").is_dir()) and not bank_exists(settings):
        return
    cap_torch_threads()
    with clean_errors(), open_bank(settings, reembed=reembed) as bank:
        count = bank.rebuild_catalog()
    typer.echo(f"reindexed {count} skill(s)" + (", re-embedded" if reembed else ""))


def prune(
    apply: Annotated[bool, typer.Option("--apply", help="Remove them (default: only report).")] = False,
    days: Annotated[
        int | None, typer.Option(min=1, help="Unused for this many days (default: SKILLBANK_PRUNE_UNUSED_DAYS).")
    ] = None,
    below: Annotated[float, typer.Option(min=0.01, max=1.0, help="Confidence under this.")] = 0.5,
    archive: Annotated[
        Path | None, typer.Option(help="Archive JSONL (default: <home>/archive/pruned-<time>.jsonl).")
    ] = (None),
) -> None:
    """Remove skills under 0.5 confidence that nobody used for N days. Dry run by default; archived before removal."""
    from skills_store.prune import apply_prune, default_archive, plan_prune

    settings = load_settings()
    refuse_archive_path(archive, settings.home)
    unused = days or settings.prune_unused_days
    catalog = open_catalog(settings)
    if catalog is None:
        return
    with catalog, clean_errors():
        candidates = plan_prune(catalog, unused_days=unused, below=below)
    table = Table(box=None)
    table.add_column("skill_id", no_wrap=True, min_width=max((len(c.skill.skill_id) for c in candidates), default=8))
    for name in ("title", "confidence", "uses", "idle days"):
        table.add_column(name)
    for c in candidates:
        s = c.skill
        table.add_row(s.skill_id, s.title, f"{s.confidence:.2f}", str(s.uses), f"{c.idle_days:.0f}")
    if candidates:
        console.print(table)
    rule = f"confidence < {below} and unused for {unused} days"
    if not apply:
        typer.echo(f"{len(candidates)} skill(s) would be pruned ({rule}); run with --apply to remove them")
        return
    path = archive or default_archive(settings.home)
    with clean_errors(), open_bank_cli(settings) as bank:
        removed = apply_prune(bank, candidates, path)
    typer.echo(f"pruned {removed} skill(s) ({rule})" + (f"; archived to {path}" if removed else ""))


def dedupe(
    apply: Annotated[bool, typer.Option("--apply", help="Merge them (default: only report).")] = False,
    similarity: Annotated[float, typer.Option(min=0.5, max=1.0, help="Cosine similarity to merge at.")] = 0.85,
    archive: Annotated[Path | None, typer.Option(help="Archive JSONL for the merged-away copies.")] = None,
) -> None:
    """Merge near-duplicate skills (same scope and error type): sources united, counters summed, nothing lost."""
    from skills_store.distill.merge import MergeConfig, dedupe_bank
    from skills_store.prune import default_archive

    settings = load_settings()
    refuse_archive_path(archive, settings.home)
    if not bank_exists(settings):
        return
    path = archive or default_archive(settings.home, "merged")
    with clean_errors(), _activity() as say:
        say("opening the skill bank (loads the embedding model)")
        with open_bank_cli(settings) as bank:

            def compared(done: int, total: int) -> None:
                say(f"comparing skills for near-duplicates: {done}/{total}", done, total)

            report = dedupe_bank(
                bank, config=MergeConfig(similarity=similarity), archive=path, apply=apply, progress=compared
            )
    for dropped, kept in report.merged:
        typer.echo(f"{dropped} -> {kept}")
    verb = "merged" if apply else "would merge"
    typer.echo(
        f"{verb} {len(report.merged)} duplicate(s)"
        + (f"; copies archived to {path}" if apply and report.merged else "")
    )


@contextlib.contextmanager
def _activity() -> Iterator[Callable[..., None]]:
    """The current phase, a bar once its size is known, and the time spent: on stderr, only on a terminal.

    The yielded `say(text, done=None, total=None)` sets the phase; with `done`/`total` the bar fills.
    """
    if not sys.stderr.isatty():
        yield lambda *_: None
        return
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    ) as progress:
        task = progress.add_task("starting", total=None)

        def say(text: str, done: int | None = None, total: int | None = None) -> None:
            progress.update(task, description=text, completed=done or 0, total=total)

        yield say


def approve(skill_id: Annotated[str, typer.Argument(help="The candidate skill's id.")]) -> None:
    """Approve a candidate skill (distilled under SKILLBANK_REVIEW): search and suggestions return it from now on."""
    settings = load_settings()
    if not bank_exists(settings, say=False):
        fail(f"no skill with id {skill_id!r}: {no_bank(settings.home)}")
    with clean_errors(), open_bank_cli(settings) as bank:
        before = bank.get(skill_id).status
        skill = bank.approve(skill_id)
    typer.echo(f"approved {skill.skill_id}: {skill.title}" if before != "active" else f"{skill_id} is already active")


def reject(skill_id: Annotated[str, typer.Argument(help="The candidate skill's id.")]) -> None:
    """Reject a candidate skill: it is deleted (its trajectories stay distilled, so it does not come back)."""
    settings = load_settings()
    if not bank_exists(settings, say=False):
        fail(f"no skill with id {skill_id!r}: {no_bank(settings.home)}")
    with clean_errors(), open_bank_cli(settings) as bank:
        skill = bank.reject(skill_id)
    typer.echo(f"rejected and deleted {skill.skill_id}: {skill.title}")
