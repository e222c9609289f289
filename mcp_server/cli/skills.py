"""`skillbank skills ...`: import, export, list, show, search, reindex, prune and dedupe the skill bank."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from mcp_server.cli.common import clean_errors, fail, load_settings, open_bank_cli
from skills_store.catalog import Catalog
from skills_store.jsonl import dump_skills, import_records, read_skill_records
from skills_store.models import Skill
from skills_store.search.filters import Filters

if TYPE_CHECKING:
    from skills_store.bank import SkillBank

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


def _load_skill_files(path: Path, bank: SkillBank) -> list[dict]:
    """Validated records from a JSONL file, or from SKILL.md folders (a skill folder or a folder of them)."""
    from skills_store.skill_md import read_skill_folders

    if path.is_dir() or path.name == "SKILL.md":
        return [s.model_dump(mode="json") for s in read_skill_folders(path)]

    def stored(skill_id: str) -> Skill | None:
        found = bank.catalog.get([skill_id])
        return found[0] if found else None

    return read_skill_records(path, stored)


@app.command("import")
def import_(
    path: Annotated[
        Path,
        typer.Argument(help="A JSONL file (one skill per line), a skill folder with SKILL.md, or a folder of them."),
    ],
) -> None:
    """Upsert skills by skill_id. Any invalid line or SKILL.md imports nothing and names every problem."""
    with clean_errors():
        if not path.exists():
            fail(f"{path}: no such file or directory")
        with open_bank_cli(load_settings()) as bank:
            records = _load_skill_files(path, bank)
            added, updated = import_records(bank, records)
    typer.echo(f"imported {len(records)} skill(s) from {path}: {added} added, {updated} updated")


def _export_dir(out: str | None, target: str | None, home: Path) -> Path:
    from skills_store.skill_md import TARGETS

    if target is not None and out not in (None, "-"):
        fail("give --out DIR or --for AGENT, not both")
    if target is not None:
        where = TARGETS[target]
        return Path(str(where).replace("~", str(home), 1)) if str(where).startswith("~") else where
    if out in (None, "-"):
        fail("--format skill-md writes one folder per skill: pass --out DIR or --for claude|codex|cline")
    return Path(out)


@app.command("export")
def export(
    out: Annotated[
        str | None, typer.Option("--out", help="JSONL: file or - for stdout. skill-md: a directory.")
    ] = None,
    format: Annotated[Literal["jsonl", "skill-md"], typer.Option("--format", help="Output format.")] = "jsonl",
    target: Annotated[
        Literal["claude", "codex", "cline"] | None,
        typer.Option("--for", help="Write SKILL.md folders where this agent reads them (implies --format skill-md)."),
    ] = None,
    min_confidence: Annotated[float, typer.Option(min=0.0, max=1.0, help="Only skills at least this confident.")] = 0.0,
) -> None:
    """Write every skill as JSONL (re-importable with `skills import`) or as Agent Skills SKILL.md folders."""
    catalog = _catalog()
    try:
        skills = catalog.list_skills(Filters(min_confidence=min_confidence), limit=10**9)
    finally:
        catalog.close()
    if format == "skill-md" or target is not None:
        from skills_store.skill_md import export_skills

        out_dir = _export_dir(out, target, Path.home())
        with clean_errors():
            written = export_skills(skills, out_dir)
        typer.echo(f"wrote {len(written)} SKILL.md folder(s) to {out_dir}")
        return
    text = dump_skills(skills)
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        with clean_errors():
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
    k: Annotated[int, typer.Option("-k", "--k", min=1, max=50, help="How many skills.")] = 5,
    mode: Annotated[Literal["hybrid", "vector", "keyword"], typer.Option()] = "hybrid",
) -> None:
    """Search the bank the way `search_skills` does (without counting uses)."""
    with clean_errors(), open_bank_cli(load_settings()) as bank:
        hits = bank.search(query, k, mode=mode, count_use=False)
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

    with clean_errors(), open_bank(load_settings(), reembed=reembed) as bank:
        count = bank.rebuild_catalog()
    typer.echo(f"reindexed {count} skill(s)" + (", re-embedded" if reembed else ""))


@app.command("prune")
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
    unused = days or settings.prune_unused_days
    catalog = _catalog()
    try:
        with clean_errors():
            candidates = plan_prune(catalog, unused_days=unused, below=below)
    finally:
        catalog.close()
    table = Table("skill_id", "title", "confidence", "uses", "idle days", box=None)
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


@app.command("dedupe")
def dedupe(
    apply: Annotated[bool, typer.Option("--apply", help="Merge them (default: only report).")] = False,
    similarity: Annotated[float, typer.Option(min=0.5, max=1.0, help="Cosine similarity to merge at.")] = 0.85,
    archive: Annotated[Path | None, typer.Option(help="Archive JSONL for the merged-away copies.")] = None,
) -> None:
    """Merge near-duplicate skills (same scope and error type): sources united, counters summed, nothing lost."""
    from skills_store.distill.merge import MergeConfig, dedupe_bank
    from skills_store.prune import default_archive

    settings = load_settings()
    path = archive or default_archive(settings.home, "merged")
    with clean_errors(), open_bank_cli(settings) as bank:
        report = dedupe_bank(bank, config=MergeConfig(similarity=similarity), archive=path, apply=apply)
    for dropped, kept in report.merged:
        typer.echo(f"{dropped} -> {kept}")
    verb = "merged" if apply else "would merge"
    typer.echo(
        f"{verb} {len(report.merged)} duplicate(s)"
        + (f"; copies archived to {path}" if apply and report.merged else "")
    )
