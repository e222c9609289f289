"""`skillbank skills ...`: import, export, list, show, search and reindex the skill bank."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from mcp_server.cli.common import clean_errors, fail, load_settings, open_bank_cli
from skills_store.catalog import Catalog, Filters
from skills_store.jsonl import dump_skills, import_records, read_skill_records
from skills_store.models import Skill

app = typer.Typer(help="Manage the skill bank.", no_args_is_help=True)
console = Console()


def _catalog() -> Catalog:
    """The catalog alone: list and show need no model and no Chroma."""
    settings = load_settings()
    path = settings.home / "catalog.db"
    if not path.is_file():
        fail(f"no skill bank at {settings.home} yet: run `skillbank serve` or `skillbank skills import FILE` first")
    with clean_errors():
        return Catalog(path, readonly=True)


def _table(skills: list[Skill]) -> Table:
    table = Table("skill_id", "title", "confidence", "uses", "language", "tags", box=None)
    for s in skills:
        table.add_row(s.skill_id, s.title, f"{s.confidence:.2f}", str(s.uses), s.language or "-", ",".join(s.tags))
    return table


@app.command("import")
def import_(path: Annotated[Path, typer.Argument(help="A JSONL file, one skill per line.")]) -> None:
    """Upsert skills by skill_id. A file with any invalid line imports nothing and names every bad line."""
    with clean_errors():
        records = read_skill_records(path)
        bank = open_bank_cli(load_settings())
        try:
            added, updated = import_records(bank, records)
        finally:
            bank.close()
    typer.echo(f"imported {len(records)} skill(s) from {path}: {added} added, {updated} updated")


@app.command("export")
def export(
    out: Annotated[str, typer.Option("--out", help="File to write, or - for stdout.")] = "-",
    format: Annotated[Literal["jsonl"], typer.Option("--format", help="Output format.")] = "jsonl",
) -> None:
    """Write every skill as JSONL (re-importable with `skills import`)."""
    catalog = _catalog()
    try:
        skills = catalog.list_skills(Filters(), limit=10**9)
    finally:
        catalog.close()
    text = dump_skills(skills)
    if out == "-":
        sys.stdout.write(text)
    else:
        Path(out).write_text(text, encoding="utf-8")
        typer.echo(f"wrote {len(skills)} skill(s) to {out}")


@app.command("list")
def list_(
    language: Annotated[str | None, typer.Option(help="Only this language.")] = None,
    repo: Annotated[str | None, typer.Option(help="Only skills learned in this repo.")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Only skills with this tag (repeatable).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List skills, highest confidence first."""
    catalog = _catalog()
    try:
        filters = Filters(language=language, repo=repo, tags=tuple(t.lower() for t in tag or ()))
        skills = catalog.list_skills(filters, limit=limit)
        total = catalog.count()
    finally:
        catalog.close()
    if as_json:
        sys.stdout.write(dump_skills(skills))
        return
    console.print(_table(skills))
    console.print(f"{len(skills)} shown of {total} skill(s)")


@app.command("show")
def show(
    skill_id: Annotated[str, typer.Argument(help="The skill's id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON record.")] = False,
) -> None:
    """Show one skill in full."""
    catalog = _catalog()
    try:
        found = catalog.get([skill_id])
    finally:
        catalog.close()
    if not found:
        fail(f"no skill with id {skill_id!r}; `skillbank skills list` shows the ids")
    skill = found[0]
    if as_json:
        typer.echo(json.dumps(skill.model_dump(mode="json"), indent=2))
        return
    console.print(f"[bold]{skill.title}[/bold]  ({skill.skill_id})")
    console.print(f"When you see: {skill.pattern}", markup=False)
    console.print(f"Do: {skill.strategy}", markup=False)
    console.print(
        f"confidence {skill.confidence:.2f} (prior {skill.prior:.2f}, {skill.successes} successes, "
        f"{skill.failures} failures), {skill.uses} uses; language {skill.language or '-'}, repo {skill.repo or '-'}, "
        f"tags {', '.join(skill.tags) or '-'}; sources {', '.join(skill.sources) or '-'}"
    )


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Error text or a description of the problem.")],
    k: Annotated[int, typer.Option(min=1, max=50)] = 5,
    mode: Annotated[Literal["hybrid", "vector", "keyword"], typer.Option()] = "hybrid",
) -> None:
    """Search the bank the way `search_skills` does (without counting uses)."""
    with clean_errors():
        bank = open_bank_cli(load_settings())
        try:
            hits = bank.search(query, k, mode=mode, count_use=False)
        finally:
            bank.close()
    for i, hit in enumerate(hits, 1):
        console.print(f"{i}. {hit.score:.3f} [bold]{hit.skill.title}[/bold] ({hit.skill.skill_id})")
        console.print(f"   {hit.skill.pattern}", markup=False)
    if not hits:
        typer.echo("no skills matched")


@app.command("reindex")
def reindex(
    reembed: Annotated[bool, typer.Option(help="Also embed every skill again (after changing the embedder).")] = False,
) -> None:
    """Rebuild the catalog (keyword index, filters) from the Chroma store."""
    from mcp_server.services import open_bank

    with clean_errors():
        bank = open_bank(load_settings(), reembed=reembed)
        try:
            count = bank.rebuild_catalog()
        finally:
            bank.close()
    typer.echo(f"reindexed {count} skill(s)" + (", re-embedded" if reembed else ""))
