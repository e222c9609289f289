"""Agent Skills (`SKILL.md`) export, the format Claude Code, Codex and Cline read (import: `skill_md_read`).

Each skill becomes a folder `<name>/SKILL.md` (the published Agent Skills rules, agentskills.io/specification):

    ---
    name: nameerror-fix-a-misspelt-or-wrong-name-3fa2b1c0   # [a-z0-9-], <= 64, no leading/trailing/double '-',
    description: ... Use when <pattern>.                    #   equal to the folder; description <= 1024
    metadata:                                               # a map of strings: every field of the skill
      skill_id: sk-...                                      #   the body does not hold (title in full, rule as
      confidence: "0.70"                                    #   JSON, sources comma-separated or, when one holds
      sources: traj-1,traj-2                                #   a comma, a JSON list, created_at...)
    ---
    # <title on one line>
    ## When you see
    ```text                                                 # a fence longer than any run of backticks in it
    <pattern>
    ```
    ## What to do
    <strategy>
    ## Evidence

Import reads such folders back: skillbank's own exports return to the same skill (by `metadata.skill_id`), every
field as it was, and any other Agent Skill becomes a skill whose pattern is its "Use when ..." clause (else its
description) and whose strategy is its body. Sections are found outside fenced code blocks only. Importing a SKILL.md
into a bank that holds its skill overwrites only the fields the file carries (`parse_fields`); a folder with an
invalid SKILL.md imports nothing and names every problem.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from skills_store.errors import InvalidInput
from skills_store.models import Skill

MAX_NAME = 64
MAX_DESCRIPTION = 1024
#: `--for` targets: where each agent looks for project (or user) skills.
TARGETS = {"claude": Path(".claude/skills"), "codex": Path(".agents/skills"), "cline": Path("~/.cline/skills")}


def skill_name(skill: Skill) -> str:
    """The folder and frontmatter name: a slug of the title plus 8 hex digits of the id (unique, stable)."""
    suffix = hashlib.sha1(skill.skill_id.encode()).hexdigest()[:8]
    ascii_title = unicodedata.normalize("NFKD", skill.title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    slug = slug[: MAX_NAME - len(suffix) - 1].rstrip("-")
    return f"{slug}-{suffix}" if slug else f"skill-{suffix}"


def _flat(text: str) -> str:
    """`text` on one line: every run of whitespace (line breaks included) one space."""
    return " ".join(text.split())


def _one_line(text: str) -> str:
    # '---' would end the frontmatter for parsers that split on it.
    return re.sub(r"-{3,}", "--", _flat(text))


def description(skill: Skill) -> str:
    """What the skill does and when to use it, within 1024 characters."""
    what = _one_line(skill.title).rstrip(".") + "."
    when = _one_line(skill.pattern).rstrip(".")
    room = MAX_DESCRIPTION - len(what) - len(" Use when you see: .")
    if len(when) > room:
        when = when[: max(room - 3, 0)].rstrip() + "..."
    return f"{what} Use when you see: {when}."


def _number(value: float) -> str:
    """Four decimals when they hold the value exactly, else every digit (`repr` reads back the same float)."""
    short = f"{value:.4f}"
    return short if float(short) == value else repr(value)


def _join_sources(sources: list[str]) -> str:
    """`a,b` when no source holds a comma (the form older exports wrote), else a JSON list."""
    plain = ",".join(sources)
    if all(s and "," not in s for s in sources) and not plain.startswith("["):
        return plain
    return json.dumps(sources, ensure_ascii=False)


def _as_read(text: str) -> str:
    """`text` as a SKILL.md body gives it back: reading text files turns "\\r\\n" and "\\r" into "\\n"."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _Dumper(yaml.SafeDumper):
    """Writes a string that is not one printable line, or holds '---', double-quoted with escapes: PyYAML would
    write U+0085 raw and read it back as a space, and the reference parser splits the file at any '---'."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if "---" in value or not value.isprintable() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _frontmatter(front: dict[str, Any]) -> str:
    text = yaml.dump(front, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 30)
    # Every '---' left is inside a double-quoted scalar, where `\x2D` is a '-'.
    return re.sub(r"-(?=--)", r"\\x2D", text)


def _metadata(skill: Skill) -> dict[str, str]:
    """Every field of `skill` its SKILL.md body does not give back exactly, as strings."""
    meta = {
        "skill_id": skill.skill_id,
        "title": skill.title,
        "confidence": _number(skill.confidence),
        "prior": _number(skill.prior if skill.prior is not None else skill.confidence),
        "successes": str(skill.successes),
        "failures": str(skill.failures),
        "uses": str(skill.uses),
        "sources": _join_sources(skill.sources),
        "tags": ",".join(skill.tags),
        "language": skill.language or "",
        "repo": skill.repo or "",
        "rule": json.dumps([r.model_dump() for r in skill.rule], ensure_ascii=False),
        "status": skill.status,
        "created_at": skill.created_at.isoformat(),
        "updated_at": skill.updated_at.isoformat(),
    }
    for key in ("pattern", "strategy"):
        if _as_read(getattr(skill, key)) != getattr(skill, key):
            meta[key] = getattr(skill, key)
    meta["generator"] = "skillbank"
    return meta


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`, so no line of it closes the fence."""
    return "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))


def render(skill: Skill) -> str:
    """The SKILL.md text of a skill."""
    meta = _metadata(skill)
    front = {"name": skill_name(skill), "description": description(skill), "metadata": meta}
    prior = skill.prior if skill.prior is not None else skill.confidence
    evidence = [
        f"- Confidence {skill.confidence:.2f} (prior {prior:.2f}; {skill.successes} successes and "
        f"{skill.failures} failures in sessions that were shown it); shown {skill.uses} times.",
        f"- Learned from: {', '.join(_flat(s) for s in skill.sources) or 'no recorded session'}.",
        f"- Language: {_flat(skill.language or '-')}; repo: {skill.repo or '-'}; tags: {', '.join(skill.tags) or '-'}.",
    ]
    fence = _fence(skill.pattern)
    return (
        f"---\n{_frontmatter(front)}---\n\n# {_flat(skill.title)}\n\n## When you see\n\n{fence}text\n{skill.pattern}\n"
        f"{fence}\n\n## What to do\n\n{skill.strategy}\n\n## Evidence\n\n" + "\n".join(evidence) + "\n"
    )


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".SKILL.md.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_skills(skills: list[Skill], out_dir: Path) -> list[Path]:
    """Write `<name>/SKILL.md` for every skill under `out_dir` (overwriting earlier exports); returns the files."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InvalidInput(f"{out_dir} is a file; pass a directory to --out")
    written = []
    for skill in skills:
        path = out_dir / skill_name(skill) / "SKILL.md"
        _write_atomic(path, render(skill))
        written.append(path)
    return written


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(frontmatter mapping, body) of a SKILL.md; `InvalidInput` when the frontmatter is missing or not YAML."""
    if not text.startswith("---"):
        raise InvalidInput("SKILL.md must start with YAML frontmatter between '---' lines")
    end = re.search(r"^---\s*$", text[3:], re.M)
    if end is None:
        raise InvalidInput("the frontmatter is not closed with a '---' line")
    try:
        front = yaml.safe_load(text[3 : 3 + end.start()])
    except yaml.YAMLError as exc:
        raise InvalidInput(f"the frontmatter is not valid YAML ({exc})") from None
    if not isinstance(front, dict):
        raise InvalidInput("the frontmatter must be a YAML mapping (name: ..., description: ...)")
    return front, text[3 + end.end() :].strip()


def _written_by_skillbank(skill_md: Path) -> bool:
    """Whether `skill_md` is an export of skillbank's (its metadata says `generator: skillbank`); an unreadable or
    hand-written one is not."""
    try:
        front, _ = split_frontmatter(skill_md.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, InvalidInput):
        return False
    meta = front.get("metadata")
    return isinstance(meta, dict) and meta.get("generator") == "skillbank"


def publish_skills(skills: list[Skill], out_dir: Path) -> tuple[list[Path], list[Path]]:
    """`export_skills`, then the SKILL.md files skillbank wrote there earlier that this export did not write again are
    removed (a skill since pruned, merged, deleted or under `--min-confidence`, or retitled: its folder name follows
    the title, and the old folder kept the old text under the same skill_id, which made the folder fail to import).
    A hand-written skill is never touched; a folder is removed only when its SKILL.md was all it held.

    Returns (written, removed) SKILL.md paths.
    """
    written = export_skills(skills, out_dir)
    keep = {path.parent.name for path in written}
    removed = []
    for folder in sorted(out_dir.iterdir()):
        skill_md = folder / "SKILL.md"
        if folder.name in keep or folder.is_symlink() or not folder.is_dir() or not skill_md.is_file():
            continue
        if _written_by_skillbank(skill_md):
            skill_md.unlink()
            removed.append(skill_md)
            with contextlib.suppress(OSError):  # other files of the user's stay, and their folder with them
                folder.rmdir()
    return written, removed
