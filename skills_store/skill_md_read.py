"""Reading and validating Agent Skills (`SKILL.md`) folders: skillbank's own exports (`skills_store.skill_md`)
back to the same skills, and any other Agent Skill as a skill whose pattern is its "Use when ..." clause (else its
description) and whose strategy is its body."""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skills_store.errors import InvalidInput
from skills_store.models import Skill
from skills_store.skill_md import MAX_DESCRIPTION, MAX_NAME, _as_read, _flat, split_frontmatter
from skills_store.truncate import truncate_text

ALLOWED_FIELDS = frozenset({"name", "description", "license", "allowed-tools", "metadata", "compatibility"})
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SECTION_RE = re.compile(r"^## (.+?)\s*$")
_TITLE_RE = re.compile(r"^# (.+)$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _split_sources(text: str) -> list[str]:
    if text.startswith("["):
        with contextlib.suppress(ValueError):
            value = json.loads(text)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return value
    return [x for x in text.split(",") if x]


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


def _without_title(lines: list[str], marks: list[str]) -> str:
    """The body less its first `# ` heading (the title, which a skill shows apart: kept, it was said twice)."""
    for i, line in enumerate(lines):
        if not marks[i] and _TITLE_RE.match(line):
            return _text(lines[:i] + lines[i + 1 :])
    return _text(lines)


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
    strategy = sections.get("what to do") or (_without_title(lines, marks) if title and not own else body) or desc
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
    for key, kind, word in (("confidence", float, "a number"), ("prior", float, "a number"),
                            ("successes", int, "a whole number"), ("failures", int, "a whole number"),
                            ("uses", int, "a whole number")):  # fmt: skip
        if meta.get(key):
            try:
                fields[key] = kind(meta[key])
            except ValueError:
                raise InvalidInput(f"metadata `{key}` must be {word}, not {meta[key][:40]!r}") from None
    if own:  # other tools' metadata may use these names for something else
        fields.update({key: meta[key] for key in ("status", "created_at", "updated_at") if meta.get(key)})
        if meta.get("rule"):
            try:
                fields["rule"] = json.loads(meta["rule"])
            except ValueError as exc:
                raise InvalidInput(f"metadata `rule` is not a JSON list of rewrites ({exc})") from None
    try:
        return Skill.model_validate(fields).model_dump(mode="json", include=set(fields))
    except ValidationError as exc:  # said as the JSONL import says it, not as pydantic's dump
        problems = [f"{'.'.join(map(str, e['loc'])) or 'skill'}: {e['msg']}" for e in exc.errors()]
        raise InvalidInput("; ".join(problems)) from None


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
            fields = parse_fields(file.read_text(encoding="utf-8-sig"), file.parent.name)  # a BOM is no text
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
