"""`skillbank skills ...`: import, export, list, show, search, reindex, prune, dedupe, approve and reject.

Only `import` creates a skill bank (seeded with the starter pack, as `skillbank serve` does). On a fresh data dir
the read-only commands create nothing: `list`, `export`, `search`, `prune`, `dedupe` and `reindex` say on stderr
that there is no bank yet and exit 0 with nothing on stdout; `show ID` is an input error (exit 2).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.text import Text

from mcp_server.cli.common import (
    bank_exists,
    clean_errors,
    fail,
    load_settings,
    no_bank,
    open_bank_cli,
    open_catalog,
    refuse_store_path,
)
from mcp_server.cli.skills_upkeep import approve, dedupe, prune, reindex, reject
from mcp_server.settings import Settings
from skills_store.catalog import Catalog
from skills_store.jsonl import dump_skills, import_records, read_skill_records
from skills_store.models import Skill, SkillStatus
from skills_store.search.filters import Filters, validate_filters

app = typer.Typer(help="Manage the skill bank.", no_args_is_help=True)
console = Console(markup=False, emoji=False, soft_wrap=True)
"""Skill text is data: nothing printed here is read as rich markup (`[/bold]`, `[link=...]`) or an emoji code, nor
broken into lines at the terminal's width (a pipe gets the lines whole)."""


def _list_skills(
    settings: Settings, filters: Filters, limit: int, status: SkillStatus | None = None
) -> tuple[list[Skill], int]:
    """The skills the filters select, normalised and checked as `search_skills` checks them (case and spaces
    ignored; an unknown value is refused, exit 2, with the close matches)."""
    catalog = open_catalog(settings)
    if catalog is None:
        return [], 0
    with catalog, clean_errors():
        if filters.active:
            filters = validate_filters(
                catalog.known_values(), filters.language, filters.repo, filters.tags, filters.min_confidence
            )
        return catalog.list_skills(filters, limit=limit, status=status), catalog.count()


def _evidence(skill: Skill) -> list[str]:
    """A candidate as a reviewer needs it: what it matches, its rule, its whole strategy (examples included) and
    the trajectories it came from."""
    rule = "; ".join(f"`{r.before}` -> `{r.after}`" for r in skill.rule) or "-"
    return [
        f"{skill.skill_id}  {skill.title}",
        f"  pattern: {skill.pattern}",
        f"  rule: {rule}",
        f"  sources: {', '.join(skill.sources) or '-'}",
        "  strategy:",
        *(f"    {line}" for line in skill.strategy.splitlines()),
        f"  approve: skillbank skills approve {skill.skill_id}   reject: skillbank skills reject {skill.skill_id}",
    ]


#: Columns of title a line keeps before the tags column gives any up.
TITLE_FIRST = 30


def _table(skills: list[Skill], width: int) -> list[str]:
    """One skill a line for a terminal `width` columns wide. Ids are never cut (their column is as wide as the
    longest); when the line is too long the tags give way first (down to no tags column: the starter pack's ids
    take 47 columns, and an 80-column terminal showed no title at all), then the title, last."""
    id_width = max((len(s.skill_id) for s in skills), default=8)
    lang_width = max([len("language"), *(len(s.language or "-") for s in skills)])
    room = width - (id_width + lang_width + 18)  # what is left for tags and title after the fixed columns
    tags_width = 20 if room >= 20 + 2 + TITLE_FIRST else room - 2 - TITLE_FIRST
    tags_width = tags_width if tags_width >= 6 else 0
    tags_head = f"{'tags':<{tags_width}}  " if tags_width else ""
    lines = [f"{'skill_id':<{id_width}}  conf  uses  {'language':<{lang_width}}  {tags_head}title"]
    for s in skills:
        tags = f"{_cut(','.join(s.tags) or '-', tags_width):<{tags_width}}  " if tags_width else ""
        lines.append(f"{s.skill_id:<{id_width}}  {s.confidence:.2f}  {s.uses:>4}  {s.language or '-':<{lang_width}}  "
                     f"{tags}{_marked(s)}")  # fmt: skip
    return [line if len(line) <= width else _cut(line, max(width, id_width + 1)) for line in lines]


def _marked(skill: Skill) -> str:
    """The title on one line, marked when the skill awaits review (search does not return it)."""
    title = " ".join(skill.title.split())
    return f"(candidate) {title}" if skill.status == "candidate" else title


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _plain(*fields: str) -> str:
    """One tab-separated line for a pipe: ids whole, no padding, no line breaks inside a field."""
    return "\t".join(" ".join(f.split()) or "-" for f in fields)


def _load_skill_files(path: Path, settings: Settings) -> list[dict]:
    """Validated records from a JSONL file, or from SKILL.md folders (a skill folder or a folder of them).

    Everything is validated before a bank is opened, so a refused file creates and seeds nothing and a huge line
    is refused before the model loads. A line may name only some fields of a stored skill: those are looked up in
    the catalog, or on a fresh home in the starter pack that opening the bank will seed.
    """
    from skills_store.skill_md_read import read_skill_folder_records
    from skills_store.starter import load_starter_pack

    if path.is_dir() or path.name == "SKILL.md":
        return read_skill_folder_records(path)  # only the fields each file carries: a re-import changes no others
    path_db = settings.home / "catalog.db"
    catalog = Catalog(path_db, readonly=True) if path_db.is_file() else None
    seeded = {} if catalog or not settings.starter_skills else {s.skill_id: s for s in load_starter_pack()}

    def stored(skill_id: str) -> Skill | None:
        if catalog is None:
            return seeded.get(skill_id)
        found = catalog.get([skill_id])
        return found[0] if found else None

    with catalog if catalog is not None else contextlib.nullcontext():
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
        settings = load_settings()
        records = _load_skill_files(path, settings)
        with open_bank_cli(settings) as bank:
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
    """Write every skill as JSONL (re-importable with `skills import`, candidates included with their status) or the
    active ones as Agent Skills SKILL.md folders (agents read those: a candidate awaiting review is never published).
    """
    settings = load_settings()
    if format == "skill-md" or target is not None:
        out_dir = _export_dir(out, target, Path.home())
        refuse_store_path(out_dir, settings.home, "--for" if target else "--out")
    elif out not in (None, "-"):
        refuse_store_path(Path(out), settings.home)
    if not bank_exists(settings):  # said on stderr; an earlier export at --out (a backup, published skills) stays
        return
    skills, _ = _list_skills(settings, Filters(min_confidence=min_confidence), 10**9)
    if format == "skill-md" or target is not None:
        skills = [s for s in skills if s.status == "active"]
        from skills_store.skill_md import publish_skills

        with clean_errors():
            written, removed = publish_skills(skills, out_dir)
        stale = f", removed {len(removed)} stale one(s) of earlier exports" if removed else ""
        typer.echo(f"wrote {len(written)} SKILL.md folder(s) to {out_dir}{stale}")
        return
    text = dump_skills(skills)
    if out in (None, "-"):
        with clean_errors():
            # in pieces: a reader that stops early (`| head`) is then seen (exit 1), where one big write that the
            # pipe took part of ended without an error
            for start in range(0, len(text), 1 << 16):
                sys.stdout.write(text[start : start + (1 << 16)])
                sys.stdout.flush()
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
    status: Annotated[
        SkillStatus | None, typer.Option(help="Only active skills, or only candidates (shown with their evidence).")
    ] = None,
) -> None:
    """List skills, highest confidence first: a table on a terminal, tab-separated lines in a pipe."""
    filters = Filters(language=language, repo=repo, tags=tuple(tag or ()))
    skills, total = _list_skills(load_settings(), filters, limit, status)
    if not total:
        return
    with clean_errors():
        if as_json:
            sys.stdout.write(dump_skills(skills))
        elif status == "candidate":
            for s in skills:
                typer.echo("\n".join(_evidence(s)) + "\n")
            if sys.stdout.isatty():
                typer.echo(f"{len(skills)} candidate(s) awaiting review")
        elif not sys.stdout.isatty():  # a pipe gets data only: whole ids, one skill a line
            for s in skills:
                fields = (s.title, f"{s.confidence:.2f}", str(s.uses), s.language or "-", ",".join(s.tags))
                typer.echo(_plain(s.skill_id, *fields))
        else:
            for row in _table(skills, shutil.get_terminal_size().columns):
                typer.echo(row)
            typer.echo(f"{len(skills)} shown of {total} skill(s)")
        sys.stdout.flush()


@app.command("show")
def show(
    skill_id: Annotated[str, typer.Argument(help="The skill's id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON record.")] = False,
) -> None:
    """Show one skill in full."""
    settings = load_settings()
    catalog = open_catalog(settings, say=False)
    if catalog is None:
        fail(f"no skill with id {skill_id!r}: {no_bank(settings.home)}")
    with catalog:
        found = catalog.get([skill_id])
    if not found:
        fail(f"no skill with id {skill_id!r}; `skillbank skills list` shows the ids")
    skill = found[0]
    if as_json:
        typer.echo(json.dumps(skill.model_dump(mode="json"), indent=2))
        return
    console.print(Text.assemble((skill.title, "bold"), f"  ({skill.skill_id})"))
    console.print(f"When you see: {skill.pattern}")
    console.print(f"Do: {skill.strategy}")
    console.print(
        f"confidence {skill.confidence:.2f} (prior {skill.prior:.2f}, {skill.successes} successes, "
        f"{skill.failures} failures), {skill.uses} uses; language {skill.language or '-'}, repo {skill.repo or '-'}, "
        f"tags {', '.join(skill.tags) or '-'}; sources {', '.join(skill.sources) or '-'}; status {skill.status}"
    )


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Error text or a description of the problem.")],
    k: Annotated[int, typer.Option("-k", "--k", min=1, max=50, help="How many skills.")] = 5,
    mode: Annotated[Literal["hybrid", "vector", "keyword"], typer.Option()] = "hybrid",
) -> None:
    """Search the bank the way `search_skills` does (without counting uses)."""
    import re

    from mcp_server.tools.search import BLANK_ADVICE, NOT_BLANK

    if not re.search(NOT_BLANK, query):  # the tool's schema refuses it too; the bank answered 5 arbitrary skills
        fail(BLANK_ADVICE)
    settings = load_settings()
    if not bank_exists(settings):
        return
    with clean_errors(), open_bank_cli(settings) as bank:
        hits = bank.search(query, k, mode=mode, count_use=False)
    for i, hit in enumerate(hits, 1):
        relevance = f"relevance {hit.relevance:.2f}, " if hit.relevance is not None else ""
        console.print(
            Text.assemble(
                f"{i}. {relevance}score {hit.score:.3f} ", (hit.skill.title, "bold"), f" ({hit.skill.skill_id})"
            )
        )
        console.print(f"   {hit.skill.pattern}")
    if not hits:
        typer.echo("no skills matched")


app.command("reindex")(reindex)
app.command("prune")(prune)
app.command("dedupe")(dedupe)
app.command("approve")(approve)
app.command("reject")(reject)
