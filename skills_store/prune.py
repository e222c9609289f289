"""Pruning: skills that outcomes have shown not to help, and that nobody has used for a while, are removed.

A skill is a candidate when its confidence is below `below` (0.5: it failed more often than its prior expected)
and it has not been shown to an agent, merged or updated for `unused_days` days (the latest of its last use and
its last update). A skill awaiting review (`candidate`) is never pruned: it is never served, so never used, and
`skills reject` removes it. `plan_prune` only reports; `apply_prune` first appends the candidates to an archive
JSONL file (re-importable with `skillbank skills import`) and deletes them only once that file is written and synced.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from skills_store.catalog import Catalog
from skills_store.errors import InvalidInput
from skills_store.jsonl import dump_skills
from skills_store.models import Skill, utcnow
from skills_store.search.filters import Filters

if TYPE_CHECKING:
    from skills_store.bank import SkillBank

PAGE = 1000


@dataclass
class PruneCandidate:
    skill: Skill
    last_active: datetime
    """The latest of the skill's last use and its last update."""
    idle_days: float


def last_active(catalog: Catalog, skill: Skill) -> datetime:
    used = catalog.last_used(skill.skill_id)
    times = [skill.updated_at, skill.created_at]
    if used:
        times.append(datetime.fromisoformat(used))
    return max(times)


def plan_prune(
    catalog: Catalog, *, unused_days: int, below: float = 0.5, now: datetime | None = None
) -> list[PruneCandidate]:
    """The skills that `apply_prune` would remove, least confident first. Changes nothing."""
    if unused_days < 1:
        raise InvalidInput(f"unused days must be at least 1, not {unused_days}")
    if not 0.0 < below <= 1.0:
        raise InvalidInput(f"the confidence threshold must be in (0, 1], not {below}")
    now = now or utcnow()
    cutoff = now - timedelta(days=unused_days)
    found: list[PruneCandidate] = []
    offset = 0
    while True:
        page = catalog.list_skills(Filters(), limit=PAGE, offset=offset)
        for skill in page:
            if skill.confidence >= below or skill.status == "candidate":  # awaiting review: never served, so never
                continue  # used; `skills reject` is what removes one

            active = last_active(catalog, skill)
            if active <= cutoff:
                found.append(PruneCandidate(skill, active, (now - active).total_seconds() / 86400))
        if len(page) < PAGE:
            break
        offset += PAGE
    return sorted(found, key=lambda c: (c.skill.confidence, c.skill.skill_id))


def default_archive(home: Path, kind: str = "pruned", now: datetime | None = None) -> Path:
    """`<home>/archive/<kind>-<UTC time>.jsonl`."""
    return home / "archive" / f"{kind}-{(now or utcnow()):%Y%m%dT%H%M%SZ}.jsonl"


def archive_skills(skills: list[Skill], archive: Path) -> None:
    """Append the skills to `archive` (JSONL) and sync it to disk."""
    if archive.exists() and not archive.is_file():
        raise InvalidInput(f"the archive {archive} is not a file; pass --archive FILE.jsonl")
    archive.parent.mkdir(parents=True, exist_ok=True)
    with archive.open("a", encoding="utf-8") as fh:
        fh.write(dump_skills(skills))
        fh.flush()
        os.fsync(fh.fileno())


def _unchanged(catalog: Catalog, planned: PruneCandidate, current: Skill) -> bool:
    """Whether nothing spared `current` since it was planned: not shown to an agent nor updated since, its
    confidence not raised, not sent back to review."""
    return (
        current.status != "candidate"
        and current.confidence <= planned.skill.confidence
        and last_active(catalog, current) <= planned.last_active
    )


def apply_prune(bank: SkillBank, candidates: list[PruneCandidate], archive: Path) -> int:
    """Archive the candidates, then delete them; returns how many were deleted.

    A candidate is checked again first: the plan may be seconds old (the CLI loads the model in between), and one
    that a running server showed an agent, or whose confidence an outcome raised, meanwhile stays.
    """
    if not candidates:
        return 0
    planned = {c.skill.skill_id: c for c in candidates}
    current = [s for s in bank.catalog.get(list(planned)) if _unchanged(bank.catalog, planned[s.skill_id], s)]
    if not current:
        return 0
    archive_skills(current, archive)
    return bank.delete([s.skill_id for s in current])
