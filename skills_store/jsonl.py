"""Skill JSONL import and export (one skill per line; a superset of the Socratic-SWE registry line)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from skills_store.errors import ImportFailed, InvalidInput
from skills_store.models import Skill

if TYPE_CHECKING:
    from skills_store.bank import SkillBank

MAX_LINE_BYTES = 1_000_000
#: Characters a JSON string may hold raw that other line readers (`str.splitlines`, JavaScript) break lines at: the
#: export writes them as escapes so every tool reads one skill a line.
_ESCAPE_LINE_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def _reason(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "line"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def parse_skill_lines(
    lines: Iterable[str], source: str, existing: Callable[[str], Skill | None] | None = None
) -> list[dict[str, Any]]:
    """Validate every line; return the raw field dicts. Raises `ImportFailed` naming each bad line.

    With `existing` (a lookup of stored skills by id), a line for a stored skill may leave fields out: it is
    validated as the stored skill with the line's fields applied.
    """
    records: list[dict[str, Any]] = []
    problems: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if len(line.encode()) > MAX_LINE_BYTES:
            problems.append((number, f"line is over {MAX_LINE_BYTES} bytes"))
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append((number, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(raw, dict):
            problems.append((number, f"expected a JSON object, got {type(raw).__name__}"))
            continue
        if raw.get("skill_id") is None and isinstance(raw.get("title"), str) and isinstance(raw.get("pattern"), str):
            raw["skill_id"] = content_id(raw["title"], raw["pattern"])  # importing the file again updates it
        stored = existing(raw["skill_id"]) if existing and isinstance(raw.get("skill_id"), str) else None
        try:
            skill = merge_record(stored, raw)
        except ValidationError as exc:
            problems.append((number, _reason(exc)))
            continue
        if skill.skill_id in seen:
            problems.append((number, f"skill_id {skill.skill_id!r} already appears on line {seen[skill.skill_id]}"))
            continue
        seen[skill.skill_id] = number
        raw["skill_id"] = skill.skill_id
        records.append(raw)
    if problems:
        raise ImportFailed(source, problems)
    return records


def content_id(title: str, pattern: str) -> str:
    """The id of an imported line that names none: the same title and pattern always get the same id (a SKILL.md
    without one gets `skillmd-<name>` for the same reason), so a file imported twice does not make two copies."""
    digest = hashlib.sha256(f"{title.strip()}\n{pattern.strip()}".encode()).hexdigest()
    return f"sk-{digest[:16]}"


def split_lines(text: str) -> list[str]:
    """The lines of a JSONL text: split at "\\n" only (a trailing "\\r" dropped), not at the other breaks of
    `str.splitlines` (U+2028, U+2029 and U+0085 may stand raw inside a JSON string: older exports hold them so)."""
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def read_skill_records(path: Path, existing: Callable[[str], Skill | None] | None = None) -> list[dict[str, Any]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:  # a BOM (Windows' UTF-8) is not part of line 1
            text = fh.read()
    except FileNotFoundError as exc:
        raise InvalidInput(f"{path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read ({exc.strerror})") from exc
    return parse_skill_lines(split_lines(text), str(path), existing)


def merge_record(existing: Skill | None, raw: dict[str, Any]) -> Skill:
    """An imported line replaces the fields it names; fields it leaves out keep their stored values.

    The line is validated as JSON, strictly: a number must be a JSON number (`"0.5"` or `true` as a confidence, or
    `2.5` as a count of uses, is refused by name, not coerced).
    """
    data = existing.model_dump(mode="json") if existing is not None else {}
    data.update(raw)
    if existing is not None and "confidence" in raw and "prior" not in raw:
        data["prior"] = None
    return Skill.model_validate_json(json.dumps(data), strict=True)


def dump_line(skill: Skill) -> str:
    """One skill as a JSONL line, U+2028, U+2029 and U+0085 escaped (JSON allows them raw; line readers split there)."""
    return skill.model_dump_json().translate(_ESCAPE_LINE_BREAKS) + "\n"


def dump_skills(skills: Iterable[Skill]) -> str:
    return "".join(dump_line(skill) for skill in skills)


def import_records(bank: SkillBank, records: list[dict[str, Any]]) -> tuple[int, int]:
    """Upsert validated records by `skill_id`; returns (added, updated).

    The stored copies read here are handed to the upsert as its `base`: what another process records while the
    import embeds (an outcome, an approval, uses) is kept for the fields the line leaves out or does not change.
    """
    existing = {s.skill_id: s for s in bank.catalog.get([r["skill_id"] for r in records])}
    skills = [merge_record(existing.get(r["skill_id"]), r) for r in records]
    bank.upsert(skills, base=existing)
    updated = sum(1 for r in records if r["skill_id"] in existing)
    return len(records) - updated, updated
