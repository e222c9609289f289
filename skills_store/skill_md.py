"""Agent Skills (`SKILL.md`) export and import, the format Claude Code, Codex and Cline read.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from skills_store.errors import InvalidInput
from skills_store.models import Skill
from skills_store.truncate import truncate_text

MAX_NAME = 64
MAX_DESCRIPTION = 1024
ALLOWED_FIELDS = frozenset({"name", "description", "license", "allowed-tools", "metadata", "compatibility"})
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: `--for` targets: where each agent looks for project (or user) skills.
TARGETS = {"claude": Path(".claude/skills"), "codex": Path(".agents/skills"), "cline": Path("~/.cline/skills")}
_SECTION_RE = re.compile(r"^## (.+?)\s*$")
_TITLE_RE = re.compile(r"^# (.+)$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


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


def _split_sources(text: str) -> list[str]:
    if text.startswith("["):
        with contextlib.suppress(ValueError):
            value = json.loads(text)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return value
    return [x for x in text.split(",") if x]


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


# -- reading and validating -----------------------------------------------------------------------------------


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


def validate(front: dict[str, Any], folder: str | None) -> list[str]:
    """Every way the frontmatter breaks the Agent Skills rules (empty when it follows them)."""
    problems = []
    extra = sorted(set(front) - ALLOWED_FIELDS)
    if extra:
        problems.append(f"unexpected frontmatter fields {extra}; allowed: {sorted(ALLOWED_FIELDS)}")
    name = front.get("name")
    if not isinstance(name, str) or not name:
        problems.append("`name` is missing or empty")
    else:
        if len(name) > MAX_NAME or not NAME_RE.match(name):
            problems.append(f"`name` {name!r} must be 1-{MAX_NAME} of a-z, 0-9 and single inner hyphens")
        if folder is not None and unicodedata.normalize("NFKC", folder) != name:
            problems.append(f"`name` {name!r} must equal its folder name {folder!r}")
    desc = front.get("description")
    if not isinstance(desc, str) or not desc.strip():
        problems.append("`description` is missing or empty")
    elif len(desc) > MAX_DESCRIPTION:
        problems.append(f"`description` is {len(desc)} characters; at most {MAX_DESCRIPTION}")
    meta = front.get("metadata")
    if meta is not None and (
        not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items())
    ):
        problems.append("`metadata` must be a map of strings to strings")
    return problems


def _fence_marks(lines: list[str]) -> list[str]:
    """Per line, where it stands: "open" or "close" (a fence), "in" (inside a fenced code block) or "" (outside).
    CommonMark's rule: a run of 3+ backticks or tildes opens, a run of the same character at least as long closes."""
    marks, fence = [], ""
    for line in lines:
        match = _FENCE_RE.match(line)
        run, rest = match.groups() if match else ("", "")
        if not fence:
            fence = run if run and not (run[0] == "`" and "`" in rest) else ""
            marks.append("open" if fence else "")
        elif run[:1] == fence[0] and len(run) >= len(fence) and not rest.strip():
            fence = ""
            marks.append("close")
        else:
            marks.append("in")
    return marks


def _text(lines: list[str]) -> str:
    """`lines` joined, blank lines at either end left out."""
    while lines and not lines[0].strip(" \t"):
        lines = lines[1:]
    while lines and not lines[-1].strip(" \t"):
        lines = lines[:-1]
    return "\n".join(lines)


def _unfenced(text: str) -> str:
    """The content of `text` when it is one fenced code block, else `text`."""
    lines = text.split("\n")
    marks = _fence_marks(lines)
    if len(lines) >= 2 and marks[0] == "open" and marks[-1] == "close" and set(marks[1:-1]) <= {"in"}:
        return "\n".join(lines[1:-1])
    return text


def _headings(lines: list[str], marks: list[str]) -> list[tuple[int, str]]:
    """(line index, lower-cased text) of every `## ` heading outside fenced code blocks."""
    found = ((i, _SECTION_RE.match(line)) for i, line in enumerate(lines) if not marks[i])
    return [(i, match.group(1).strip().lower()) for i, match in found if match]


def _title(lines: list[str], marks: list[str], before: int) -> str | None:
    """The first `# ` heading outside fenced code blocks above line `before`."""
    for i, line in enumerate(lines[:before]):
        match = None if marks[i] else _TITLE_RE.match(line)
        if match:
            return match.group(1).strip()
    return None


def _sections(lines: list[str], marks: list[str]) -> dict[str, str]:
    heads = _headings(lines, marks)
    ends = [i for i, _ in heads[1:]] + [len(lines)] if heads else []
    return {name: _text(lines[i + 1 : end]) for (i, name), end in zip(heads, ends, strict=True)}


def _own_sections(lines: list[str], marks: list[str]) -> dict[str, str] | None:
    """Sections of a SKILL.md skillbank wrote: the pattern is fenced, and the strategy may hold `## ` lines and
    unclosed fences of its own, so it runs from the first `## What to do` after the pattern to the last
    `## Evidence`. None when the file no longer has that shape (then it reads as any Agent Skill)."""
    heads = _headings(lines, marks)
    when = next((i for i, name in heads if name == "when you see"), None)
    what = next((i for i, name in heads if name == "what to do" and (when is None or i > when)), None)
    if when is None or what is None:
        return None
    evidence = max((i for i in range(what + 1, len(lines)) if lines[i].rstrip() == "## Evidence"), default=len(lines))
    return {"when you see": _text(lines[when + 1 : what]), "what to do": _text(lines[what + 1 : evidence])}


def _exact(value: str | None, shown: str, form: Callable[[str], str]) -> str:
    """`value`, the exact text metadata carries for a field the body shows as `shown`, unless the body was edited."""
    return value if value is not None and form(value) == shown else shown


def parse_fields(text: str, folder: str | None = None) -> dict[str, Any]:
    """The fields of a skill a SKILL.md carries, validated, as JSON values (an import record: importing it over a
    stored skill changes only those); `InvalidInput` listing every problem when it breaks the rules."""
    front, body = split_frontmatter(_as_read(text))
    problems = validate(front, folder)
    if problems:
        raise InvalidInput("; ".join(problems))
    meta: dict[str, str] = front.get("metadata") or {}
    own = meta.get("generator") == "skillbank"
    lines = body.split("\n")
    marks = _fence_marks(lines)
    sections = (_own_sections(lines, marks) if own else None) or _sections(lines, marks)
    first = min((i for i, _ in _headings(lines, marks)), default=len(lines)) if own else len(lines)
    title = _title(lines, marks, first)
    desc = " ".join(front["description"].split())
    when = re.search(r"Use when(?: you see)?:?\s*(.+)$", desc, re.S)
    pattern = _unfenced(sections.get("when you see") or (when.group(1).rstrip(".") if when else desc))
    strategy = sections.get("what to do") or body or desc
    if own:
        title = title and _exact(meta.get("title"), title, _flat)
        pattern = _exact(meta.get("pattern"), pattern, _as_read)
        strategy = _exact(meta.get("strategy"), strategy, _as_read)
    fields: dict[str, Any] = {
        "skill_id": meta.get("skill_id") or f"skillmd-{front['name']}",
        "title": title or meta.get("title") or front["name"],
        "pattern": truncate_text(pattern, 4000),
        "strategy": truncate_text(strategy, 8000),
    }
    if "sources" in meta or not own:
        fields["sources"] = _split_sources(meta.get("sources", "")) or ([] if own else [f"skill-md:{front['name']}"])
    if "tags" in meta:
        fields["tags"] = [t for t in meta["tags"].split(",") if t]
    fields.update({key: meta[key] or None for key in ("language", "repo") if key in meta})
    for key in ("confidence", "prior"):
        if meta.get(key):
            fields[key] = float(meta[key])
    for key in ("successes", "failures", "uses"):
        if meta.get(key):
            fields[key] = int(meta[key])
    if own:  # other tools' metadata may use these names for something else
        fields.update({key: meta[key] for key in ("status", "created_at", "updated_at") if meta.get(key)})
        if meta.get("rule"):
            try:
                fields["rule"] = json.loads(meta["rule"])
            except ValueError as exc:
                raise InvalidInput(f"metadata `rule` is not a JSON list of rewrites ({exc})") from None
    return Skill.model_validate(fields).model_dump(mode="json", include=set(fields))


def parse_skill(text: str, folder: str | None = None) -> Skill:
    """The skill a SKILL.md describes (fields it does not carry at their defaults); `InvalidInput` listing every
    problem when it breaks the rules."""
    return Skill.model_validate(parse_fields(text, folder))


def skill_files(path: Path) -> list[Path]:
    """The SKILL.md files `path` names: a SKILL.md file, a skill folder, or a folder of skill folders."""
    if path.is_file():
        return [path]
    if (path / "SKILL.md").is_file():
        return [path / "SKILL.md"]
    found = sorted(p / "SKILL.md" for p in path.iterdir() if (p / "SKILL.md").is_file()) if path.is_dir() else []
    if not found:
        raise InvalidInput(f"{path}: no SKILL.md there, nor in its sub-folders; pass a skill folder or their parent")
    return found


class SkillFolderImportFailed(InvalidInput):
    """Some SKILL.md files were invalid; nothing was imported. `problems` lists (file, reason)."""

    def __init__(self, path: Path, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        lines = "\n".join(f"  {file}: {reason}" for file, reason in problems)
        super().__init__(f"{path}: {len(problems)} invalid SKILL.md file(s), nothing imported:\n{lines}")


def read_skill_folder_records(path: Path) -> list[dict[str, Any]]:
    """Every skill under `path` as an import record: the fields its SKILL.md carries, JSON values (the form
    `jsonl.import_records` upserts, leaving a stored skill's other fields as they are). `SkillFolderImportFailed`
    naming each bad file when any is invalid."""
    records: list[dict[str, Any]] = []
    problems: list[tuple[str, str]] = []
    seen: dict[str, Path] = {}
    for file in skill_files(path):
        try:
            fields = parse_fields(file.read_text(encoding="utf-8"), file.parent.name)
        except (InvalidInput, ValueError, OSError) as exc:
            problems.append((str(file), str(exc).replace("\n", " ")))
            continue
        if fields["skill_id"] in seen:
            problems.append((str(file), f"skill_id {fields['skill_id']!r} is also in {seen[fields['skill_id']]}"))
            continue
        seen[fields["skill_id"]] = file
        records.append(fields)
    if problems:
        raise SkillFolderImportFailed(path, problems)
    return records


def read_skill_folders(path: Path) -> list[Skill]:
    """Every skill under `path` (fields its SKILL.md does not carry at their defaults); `SkillFolderImportFailed`
    naming each bad file when any is invalid."""
    return [Skill.model_validate(record) for record in read_skill_folder_records(path)]
