"""Merging near-duplicate skills into one, never losing a lesson.

Two lessons with an edit rule (see `lesson`) are one when their signatures (patterns) and their leading rewrites
agree, whatever repo, file or variable names they came from; the same exception type with another rule stays
apart. They are found by their `lesson-<hash>` tag, and their merge keeps one strategy with the other copy's
examples added (at most `lesson.MAX_EXAMPLES`) and every source; a merge across repos has no repo. Each session
that confirms the lesson again adds `REPLICATION_BONUS` to the pooled prior (at most `REPLICATED_MAX_PRIOR`).

Skills without a rule (case notes, pitfalls, imported skills) are copies of one lesson when they are in the same
scope (language and repo), name the same error type in their patterns, are both pitfalls or both fixes, and their
documents have a cosine similarity of at least `MergeConfig.similarity`. Their merge keeps the better-supported
strategy (more sources and net successes), or the text an LLM merger writes; unites the sources and tags; sums uses,
successes and failures; and pools the priors (weighted by the number of sources). A strategy that differs from the
one kept is appended as an alternative while it fits, so what either copy taught stays readable.

Safety: a draft merged into a stored skill deletes nothing. `dedupe_bank` merging two stored skills archives the
other copy, then stores the survivor (under its own id, with both copies' sources) and deletes the copy in one write
that lands whole or not at all (`SkillBank.merge_pair`): a store never holds neither copy, nor the survivor next to
the copy it already counts. Both merge from the copies stored when they write (under the writers' lock, see
`rebase`), so an outcome or an approval recorded meanwhile is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, Field

from skills_store.distill import lesson
from skills_store.distill.changes import similarity
from skills_store.distill.signature import error_type
from skills_store.errors import SkillStoreError
from skills_store.models import Skill, utcnow
from skills_store.search.filters import Filters

if TYPE_CHECKING:
    from skills_store.bank import SkillBank

#: An LLM (or other) merger: given the kept and the other copy, the merged (title, strategy), or None to fall back.
Merger = Callable[[Skill, Skill], tuple[str, str] | None]
MAX_STRATEGY = 8000
ALTERNATIVE = "\n\nAlso worked (from {sources}):\n"
#: Prior added per session that adds its confirmation to a lesson merged by rule, up to `REPLICATED_MAX_PRIOR`.
REPLICATION_BONUS = 0.05
REPLICATED_MAX_PRIOR = 0.85


class MergeConfig(BaseModel):
    """When two skills are one lesson, and how their texts combine."""

    similarity: float = Field(default=0.85, ge=0.0, le=1.0)
    """Cosine similarity of the two documents (title, pattern, strategy) at or above which they may merge."""
    candidates: int = Field(default=5, ge=1, le=50)
    """How many nearest stored skills are checked for each new draft."""
    same_text: float = Field(default=0.8, ge=0.0, le=1.0)
    """Strategies whose word overlap is at least this are one text; below it the other is kept as an alternative."""


@dataclass
class MergeReport:
    added: list[str] = field(default_factory=list)
    """Ids of drafts stored as new skills."""
    merged: list[tuple[str, str]] = field(default_factory=list)
    """(draft or dropped id, id of the skill it was merged into)."""


def support(skill: Skill) -> float:
    """How well a skill's strategy is supported: its sources and net outcomes, then its prior."""
    return len(skill.sources) + skill.successes - skill.failures + (skill.prior or 0.0)


def same_lesson_kind(a: Skill, b: Skill) -> bool:
    """Two lessons with rules: the same signature and leading rewrite. Otherwise: same scope, same error type, both
    pitfalls or both not (the preconditions for a merge by similarity)."""
    by_rule = lesson.same_rule(a, b)
    if by_rule is not None:
        return by_rule and ("pitfall" in a.tags) == ("pitfall" in b.tags)
    return (
        (a.language, a.repo) == (b.language, b.repo)
        and error_type(a.pattern) == error_type(b.pattern)
        and ("pitfall" in a.tags) == ("pitfall" in b.tags)
    )


def combine(first: Skill, second: Skill, *, config: MergeConfig | None = None, merger: Merger | None = None) -> Skill:
    """One skill out of two copies of a lesson. It keeps `first`'s id (the stored copy); see the module doc."""
    config = config or MergeConfig()
    keep, other = (first, second) if support(first) >= support(second) else (second, first)
    # A reviewed (active) lesson and an unreviewed copy: the text served stays the reviewed one, word for word (no
    # examples, alternatives or LLM rewrite from the candidate); the candidate adds its evidence only.
    guarded = first.status != second.status
    if guarded:
        keep, other = (first, second) if first.status == "active" else (second, first)
    one_rule = bool(lesson.same_rule(first, second))
    texts = merger(keep, other) if merger is not None and not guarded else None
    if texts is not None:
        title, strategy = texts
    elif guarded:
        title, strategy = keep.title, keep.strategy
    elif one_rule:
        title = keep.title
        strategy = lesson.with_examples(keep.strategy, lesson.examples_of(other.strategy))
    else:
        title, strategy = keep.title, keep.strategy
        if similarity(keep.strategy, other.strategy) < config.same_text and other.strategy[:200] not in strategy:
            extra = ALTERNATIVE.format(sources=", ".join(other.sources[:3]) or "another copy") + other.strategy
            if len(strategy) + len(extra) <= MAX_STRATEGY:
                strategy += extra
    sources = list(dict.fromkeys([*first.sources, *second.sources]))
    n1, n2 = max(1, len(first.sources)), max(1, len(second.sources))
    prior = ((first.prior or first.confidence) * n1 + (second.prior or second.confidence) * n2) / (n1 + n2)
    if one_rule and len(sources) > max(n1, n2):
        # The same rule fixed the same failure in another session: evidence that the lesson generalises.
        prior = min(REPLICATED_MAX_PRIOR, max(prior, prior + REPLICATION_BONUS * (len(sources) - max(n1, n2))))
    merged = first.model_copy(
        update={
            "title": title[:200],
            "pattern": keep.pattern,
            "strategy": strategy[:MAX_STRATEGY],
            "prior": round(prior, 6),
            "tags": list(dict.fromkeys([*first.tags, *second.tags]))[:32],
            "sources": sources,
            "uses": first.uses + second.uses,
            "successes": first.successes + second.successes,
            "failures": first.failures + second.failures,
            "created_at": min(first.created_at, second.created_at),
            "updated_at": utcnow(),
            "repo": first.repo if first.repo == second.repo else None,
            "rule": keep.rule if guarded else keep.rule or other.rule,
            # A reviewed lesson stays served when an unreviewed copy of it merges in (and vice versa).
            "status": "active" if "active" in (first.status, second.status) else "candidate",
        }
    )
    merged = Skill.model_validate(merged.model_dump())
    merged.recompute_confidence()
    return merged


def find_duplicate(bank: SkillBank, skill: Skill, config: MergeConfig) -> Skill | None:
    """The stored skill `skill` is a copy of, if any: the one with its lesson tag, else the most similar one that
    qualifies."""
    tag = lesson.lesson_tag_of(skill)
    if tag is not None:
        for other in bank.list_skills(Filters(tags=(tag,)), limit=config.candidates + 1):
            if other.skill_id != skill.skill_id and same_lesson_kind(other, skill):
                return other
        return None
    for hit in bank.similar(skill, k=config.candidates):
        if hit.score >= config.similarity and same_lesson_kind(hit.skill, skill):
            return hit.skill
    return None


def merge_into_bank(
    bank: SkillBank, drafts: Sequence[Skill], *, config: MergeConfig | None = None, merger: Merger | None = None
) -> MergeReport:
    """Store each draft as a new skill, or merge it into the skill it duplicates (stored, or earlier in `drafts`).

    Deletes nothing. The batch is written with one upsert of the new skills and one update of the merged ones.
    A draft whose sources the target already holds was merged before (a pass that was interrupted before its
    trajectories were marked) and changes nothing.
    """
    config = config or MergeConfig()
    report = MergeReport()
    if not drafts:
        return report
    vectors = bank.embedder.embed([d.document() for d in drafts])
    new: dict[str, Skill] = {}
    new_vectors: dict[str, np.ndarray] = {}
    changed: dict[str, Skill] = {}
    read: dict[str, Skill] = {}  # the stored copies merged into, as read: the update rebases onto them (`rebase`)
    for draft, vector in zip(drafts, vectors, strict=True):
        target = new.get(draft.skill_id) or changed.get(draft.skill_id)
        if target is None:
            stored = bank.catalog.get([draft.skill_id])
            target = read.setdefault(draft.skill_id, stored[0]) if stored else None
        if target is None:
            target = _in_batch_duplicate(draft, vector, new, new_vectors, config)
        if target is None:
            found = find_duplicate(bank, draft, config)
            if found is not None:
                read.setdefault(found.skill_id, found)
            target = changed.get(found.skill_id, found) if found is not None else None
        if target is None:
            new[draft.skill_id] = draft
            new_vectors[draft.skill_id] = vector
            report.added.append(draft.skill_id)
            continue
        report.merged.append((draft.skill_id, target.skill_id))
        if set(draft.sources) <= set(target.sources):
            continue
        merged = combine(target, draft, config=config, merger=merger)
        (new if target.skill_id in new else changed)[target.skill_id] = merged
    if new:
        bank.upsert(list(new.values()))
    if changed:
        # Outcomes and approvals recorded while this batch was embedded and compared are kept (`base`).
        bank.update(list(changed.values()), base=read)
    return report


def _in_batch_duplicate(
    draft: Skill, vector: np.ndarray, new: dict[str, Skill], vectors: dict[str, np.ndarray], config: MergeConfig
) -> Skill | None:
    best: tuple[float, Skill] | None = None
    for skill_id, skill in new.items():
        if not same_lesson_kind(skill, draft):
            continue
        if lesson.same_rule(skill, draft):
            return skill
        score = float(vectors[skill_id] @ vector)
        if score >= config.similarity and (best is None or score > best[0]):
            best = (score, skill)
    return best[1] if best else None


def dedupe_bank(
    bank: SkillBank,
    *,
    config: MergeConfig | None = None,
    merger: Merger | None = None,
    archive: Path | None = None,
    apply: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> MergeReport:
    """Merge stored near-duplicates pairwise. With `apply=False`, only report what would merge.

    Each dropped copy is appended to `archive` (JSONL) before the write that stores the survivor and deletes it.
    `progress(done, total)` is called after each stored skill is compared (a CLI progress bar).
    """
    config = config or MergeConfig()
    report = MergeReport()
    gone: set[str] = set()
    ids = list(bank.catalog.iter_ids())
    for done, skill_id in enumerate(ids, 1):
        if progress is not None:
            progress(done, len(ids))
        if skill_id in gone:
            continue
        found = bank.catalog.get([skill_id])
        if not found:
            continue
        skill = found[0]
        other = find_duplicate(bank, skill, config)
        if other is None or other.skill_id in gone:
            continue
        keep, drop = (skill, other) if support(skill) >= support(other) else (other, skill)
        if skill.status != other.status:  # the reviewed copy survives, under its own id and text
            keep, drop = (skill, other) if skill.status == "active" else (other, skill)
        report.merged.append((drop.skill_id, keep.skill_id))
        gone.add(drop.skill_id)
        if apply:
            _merge_stored(bank, keep, drop, config, merger, archive)
    return report


def _merge_stored(
    bank: SkillBank, keep: Skill, drop: Skill, config: MergeConfig, merger: Merger | None, archive: Path | None
) -> None:
    """Merge the stored `drop` into the stored `keep`: under the writers' lock, from the copies stored then, as one
    write (`SkillBank.merge_pair`), so outcomes recorded meanwhile count and an interruption leaves both copies as
    they were. A `drop` whose sources `keep` already holds was merged before (by an older version interrupted
    between the two writes): it is only deleted, not counted again."""
    from skills_store.jsonl import dump_skills

    texts: list[tuple[str, str] | None] = []
    if merger is not None:  # an LLM call takes seconds: made here, not under the lock that outcomes wait for

        def asked(first: Skill, second: Skill) -> tuple[str, str] | None:
            texts.append(merger(first, second))
            return texts[-1]

        combine(keep, drop, config=config, merger=asked)
    with bank.writing():
        fresh = {s.skill_id: s for s in bank.catalog.get([keep.skill_id, drop.skill_id])}
        if len(fresh) < 2:
            return  # one of them was deleted meanwhile
        keep, drop = fresh[keep.skill_id], fresh[drop.skill_id]
        if archive is not None:
            archive.parent.mkdir(parents=True, exist_ok=True)
            with archive.open("a", encoding="utf-8") as fh:
                fh.write(dump_skills([drop]))
        if drop.sources and set(drop.sources) <= set(keep.sources):
            bank.delete([drop.skill_id])
            bank.catalog.note_merged(drop.skill_id, keep.skill_id)
            return
        merged = combine(keep, drop, config=config, merger=(lambda _a, _b: texts[0]) if texts else None)
        if not set(drop.sources) <= set(merged.sources):
            raise SkillStoreError(f"merging {drop.skill_id} into {keep.skill_id} would lose its sources; kept both")
        bank.merge_pair(merged, drop.skill_id)
