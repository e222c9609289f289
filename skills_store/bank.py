"""`SkillBank`: the skill store as the tools see it. Writes, counters, consistency; ranking in `search/`.

Writes go to Chroma (the record) and then to the catalog (one transaction). Reads hydrate skills from the
catalog, so a search during an import sees each skill whole, old or new.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np

from skills_store.catalog import Catalog
from skills_store.datadir import check_data_dir
from skills_store.errors import InvalidInput, NotFound
from skills_store.locks import ReadWriteLock, WriterLock
from skills_store.models import Skill, SkillStatus, utcnow
from skills_store.protocols import Embedder, SkillStore
from skills_store.rebase import rebase
from skills_store.record_sync import RecordSync, writer_id
from skills_store.search.engine import SearchConfig, SkillSearch
from skills_store.search.filters import Filters, validate_filters
from skills_store.search.fusion import ScoredSkill, SearchMode
from skills_store.search.relevance import default_threshold
from skills_store.trajectories.schema import read_repo_renames

if TYPE_CHECKING:
    from skills_store.redact import Redactor

__all__ = ["BankConfig", "SkillBank"]


@dataclass
class BankConfig:
    search: SearchConfig = field(default_factory=SearchConfig)
    flush_every: int = 256
    """Use counters are written back to Chroma once this many skills have changed (and on close)."""
    shared_check_ms: int = 250
    """On a shared Chroma server, a search first checks (at most once per this many ms) whether another instance
    wrote, and if so copies its changes into this catalog (`RecordSync.catch_up`). 0: check before every search."""


class SkillBank:
    def __init__(
        self,
        store: SkillStore,
        catalog: Catalog,
        embedder: Embedder,
        config: BankConfig | None = None,
        *,
        redactor: Redactor | None = None,
    ) -> None:
        self.store = store
        self.redactor = redactor
        """Applied to the text of every skill written (imports included): skill text is served to every client."""
        self.catalog = catalog
        self.embedder = embedder
        self.config = config or BankConfig()
        self._dirty: set[str] = set()
        self._known: tuple[str | None, dict[str, list[str]]] = (None, {})
        queries = ReadWriteLock()
        self._writers = WriterLock(catalog, store, queries)
        self.record = RecordSync(
            store, catalog, embedder, self._writers, check_interval_s=self.config.shared_check_ms / 1000
        )
        self._executor: ThreadPoolExecutor | None = None
        self.searcher = SkillSearch(store, catalog, embedder, self.config.search, queries=queries)

    def _worker(self) -> ThreadPoolExecutor:
        """The thread that writes use counters back to Chroma off the request path (`count_uses`)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillbank-flush")
        return self._executor

    @classmethod
    def open(
        cls,
        home: Path,
        embedder: Embedder,
        *,
        chroma_url: str | None = None,
        config: BankConfig | None = None,
        reembed: bool = False,
        redactor: Redactor | None = None,
    ) -> SkillBank:
        """Open (creating if needed) the bank under `home`; a `ConfigError` names the path when it cannot."""
        from skills_store.chroma_store import ChromaSkillStore

        check_data_dir(home)
        catalog = Catalog(home / "catalog.db")
        store = ChromaSkillStore(
            path=None if chroma_url else home / "chroma",
            url=chroma_url,
            embedder=embedder.name,
            writer=writer_id(catalog),
        )
        bank = cls(store, catalog, embedder, config, redactor=redactor)
        if reembed or bank.record.reembedding:
            bank.record.reembed()
        bank.record.check_embedder()
        bank.record.sync()
        bank.rename_repos(read_repo_renames(home / "trajectories.db"))
        return bank

    def close(self) -> None:
        """Write pending use counts back, stop the worker, close Chroma and the catalog."""
        self.flush()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        self.store.close()
        self.catalog.close()

    def __enter__(self) -> SkillBank:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- consistency between the record (Chroma) and the catalog: see `record_sync` --------------------------
    def reembed(self, batch: int = 512) -> int:
        """Embed every skill again with this bank's embedder (after changing it); returns how many."""
        return self.record.reembed(batch)

    def rebuild_catalog(self) -> int:
        """Re-read the catalog from Chroma (`skillbank skills reindex`); returns how many skills."""
        return self.record.rebuild_catalog()

    def flush(self) -> None:
        """Write use counters that changed since the last flush back to Chroma."""
        self.catalog.record_uses([])  # the counts the catalog kept while it was busy, if it is free now
        with self._writers.thread_lock:
            dirty, self._dirty = sorted(self._dirty), set()
        if dirty:
            with self._writers.exclusive():
                self.store.update_metadata(self.catalog.get(dirty))

    # -- writes: each is rebased under the writers' lock onto what is stored then (see `rebase`) ----------------
    def writing(self) -> AbstractContextManager[None]:
        """Hold the writers' lock (re-entrant) across a read and the writes that depend on it (`dedupe_bank`)."""
        return self._writers.exclusive()

    def upsert(self, skills: Sequence[Skill], *, base: Mapping[str, Skill] | None = None) -> None:
        """Write skills (new or replacing stored ones), embedding them first, outside the writers' lock.

        `base`: the stored copies the caller read (and changed) before the call; each skill is rebased onto the
        copy stored at write time, so an outcome, a use or an approval recorded meanwhile is kept, and a skill
        deleted meanwhile is not written back. Without it the skills are written as they are.
        """
        if not skills:
            return
        skills = [self._redacted(s) for s in skills]
        ids = [s.skill_id for s in skills]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise InvalidInput(f"duplicate skill ids in one upsert: {', '.join(dupes)}")
        docs = {s.skill_id: s.document() for s in skills}
        embedded = dict(zip(ids, self.embedder.embed(list(docs.values())), strict=True))
        with self._writers.exclusive():
            if base:
                skills = self._rebased(skills, base)
            redo = [s for s in skills if s.document() != docs[s.skill_id]]
            if redo:  # text changed by another writer meanwhile and kept: embed what is written
                vectors = self.embedder.embed([s.document() for s in redo])
                embedded.update(zip([s.skill_id for s in redo], vectors, strict=True))
            if skills:
                self.record.write(skills, np.stack([embedded[s.skill_id] for s in skills]))

    def _rebased(self, skills: Sequence[Skill], base: Mapping[str, Skill]) -> list[Skill]:
        """Under the writers' lock: `skills` rebased onto the stored copies (those read in `base`)."""
        stored = {s.skill_id: s for s in self.catalog.get([s.skill_id for s in skills if s.skill_id in base])}
        out = []
        for skill in skills:
            was = base.get(skill.skill_id)
            if was is None:
                out.append(skill)
            elif skill.skill_id in stored:
                out.append(rebase(skill, was, stored[skill.skill_id]))
        return out

    def _redacted(self, skill: Skill) -> Skill:
        if self.redactor is None:
            return skill
        fields = {f: self.redactor.redact_text(getattr(skill, f)) for f in ("title", "pattern", "strategy")}
        if all(fields[f] == getattr(skill, f) for f in fields):
            return skill
        return skill.model_copy(update=fields)

    def update(self, skills: Sequence[Skill], *, base: Mapping[str, Skill] | None = None) -> None:
        """Rewrite existing skills; re-embed only those whose searchable text changed.

        `base` as in `upsert`; by default the copies stored when the call starts (the caller read no earlier).
        """
        current = {s.skill_id: s for s in self.catalog.get([s.skill_id for s in skills])}
        missing = [s.skill_id for s in skills if s.skill_id not in current]
        if missing:
            raise NotFound(f"no such skill(s): {', '.join(missing)}")
        base = {**current, **(base or {})}
        changed_text = [s for s in skills if s.document() != current[s.skill_id].document()]
        same_text = [s for s in skills if s.document() == current[s.skill_id].document()]
        for s in skills:
            s.updated_at = utcnow()
        if changed_text:
            self.upsert(changed_text, base=base)
        if same_text:
            with self._writers.exclusive():
                rebased = self._rebased(same_text, base)
                stored = {s.skill_id: s.document() for s in self.catalog.get([s.skill_id for s in rebased])}
                moved = {s.skill_id for s in rebased if s.document() != stored.get(s.skill_id)}
                self.record.write([s for s in rebased if s.skill_id not in moved], None)
                # Their text was changed meanwhile and kept: the stored vector is of another text.
                self.upsert([s for s in rebased if s.skill_id in moved])

    def merge_pair(self, survivor: Skill, gone: str) -> None:
        """Write `survivor` (a stored skill, changed: a merge) and delete `gone` as one write, which lands whole or
        not at all (see `record_sync`): an interrupted dedupe never leaves the merged survivor next to its copy.

        The caller holds `writing()` and read both skills under it.
        """
        with self._writers.exclusive():
            survivor = self._redacted(survivor)
            survivor.updated_at = utcnow()
            current = self.catalog.get([survivor.skill_id])
            if not current:
                raise NotFound(f"no such skill: {survivor.skill_id}")
            same = current[0].document() == survivor.document()
            vectors = None if same else self.embedder.embed([survivor.document()])
            self.record.write([survivor], vectors, remove=[gone])
            self._dirty.discard(gone)
            self.catalog.note_merged(gone, survivor.skill_id)

    def rename_repos(self, renames: dict[str, str]) -> int:
        """Give skills whose `repo` is a key of `renames` the new value (a repo identity stored in an older form,
        see `trajectories.schema`). Idempotent: once renamed, nothing matches the old value. Returns skills renamed.
        """
        renamed: list[Skill] = []
        known = set(self.known_values()["repo"]) if renames else set()
        for old, new in renames.items():
            if old in known and old != new:
                for skill in self.catalog.list_skills(Filters(repo=old), limit=1_000_000):
                    skill.repo = new
                    renamed.append(skill)
        if renamed:
            self.update(renamed)
        return len(renamed)

    def delete(self, skill_ids: Sequence[str]) -> int:
        with self._writers.exclusive():
            self.record.pending(list(skill_ids))
            self.store.delete(skill_ids)
            self._dirty.difference_update(skill_ids)
            return self.catalog.delete(skill_ids)

    # -- review: candidates are served by nothing until approved ---------------------------------------------
    def approve(self, skill_id: str) -> Skill:
        """Make a candidate skill active (searchable); an active one is returned unchanged."""
        with self._writers.exclusive():
            skill = self.get(skill_id)
            if skill.status != "active":
                skill.status = "active"
                self.update([skill])
        return skill

    def reject(self, skill_id: str) -> Skill:
        """Delete a candidate skill; its trajectories stay processed, so it is not distilled again.

        An active skill is refused (`InvalidInput`): it was reviewed or never needed review; `skills prune` and
        `skills dedupe` remove active skills.
        """
        skill = self.get(skill_id)
        if skill.status != "candidate":
            raise InvalidInput(f"skill {skill_id!r} is {skill.status}, not a candidate: only candidates are rejected")
        self.delete([skill_id])
        return skill

    def record_outcome(self, skill_ids: Sequence[str], success: bool) -> list[Skill]:
        """A trajectory that was shown these skills ended in success or failure: move their confidence.

        Read, changed and written under the writers' lock, so concurrent outcomes are all counted.
        """
        with self._writers.exclusive():
            skills = self.catalog.get(self._surviving(skill_ids))
            for skill in skills:
                if success:
                    skill.successes += 1
                else:
                    skill.failures += 1
                skill.recompute_confidence()
            if skills:
                self.update(skills)
        return skills

    def _surviving(self, skill_ids: Sequence[str]) -> list[str]:
        """These ids, each one merged away since (a session shown it before a `skills dedupe`) replaced by the skill
        it was merged into; once each."""
        ids = list(dict.fromkeys(skill_ids))
        gone = set(ids) - {s.skill_id for s in self.catalog.get(ids)}
        if gone:
            merged = self.catalog.merged_into()
            for i, skill_id in enumerate(ids):
                hops = 0
                while ids[i] in gone and skill_id in merged and hops < 20:  # a chain of merges, never a loop
                    skill_id, hops = merged[skill_id], hops + 1
                ids[i] = skill_id
        return list(dict.fromkeys(ids))

    # -- reads --------------------------------------------------------------------------------------------
    def count(self) -> int:
        return self.catalog.count()

    def get(self, skill_id: str) -> Skill:
        found = self.catalog.get([skill_id])
        if not found:
            raise NotFound(f"no skill with id {skill_id!r}; `skillbank skills list` shows the ids")
        return found[0]

    def list_skills(
        self, filters: Filters | None = None, *, limit: int = 100, offset: int = 0, status: SkillStatus | None = None
    ) -> list[Skill]:
        return self.catalog.list_skills(filters or Filters(), limit=limit, offset=offset, status=status)

    def known_values(self) -> dict[str, list[str]]:
        generation = self.catalog.get_meta("generation")
        if self._known[0] != generation or not self._known[1]:
            self._known = (generation, self.catalog.known_values())
        return self._known[1]

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        language: str | None = None,
        repo: str | None = None,
        tags: Sequence[str] | None = None,
        min_confidence: float = 0.0,
        mode: SearchMode = "hybrid",
        count_use: bool = True,
    ) -> list[ScoredSkill]:
        """The best `k` active skills for `query` (see `search.engine`); unknown filter values are refused."""
        self.record.catch_up()
        total = self.catalog.count()
        if total == 0:
            return []
        self._writers.refresh_if_stale()
        filters = validate_filters(self.known_values(), language, repo, tags, min_confidence)
        out = self.searcher.search(query, k, filters, mode, total=total)
        if count_use:
            self._shown(out)
        return out

    def prefetch(self, query: str) -> bool:
        """Start encoding `query` for the `search` about to come (see `SkillSearch.prefetch`); never waits."""
        return self.searcher.prefetch(query)

    def suggest_for_failures(
        self, queries: Sequence[str], k: int = 3, *, threshold: float | None = None
    ) -> list[ScoredSkill]:
        """The best `k` skills over all failure messages of a test run whose relevance reaches `threshold` (default:
        the calibrated one, `search.relevance`), each once at its best relevance, most relevant first; often none.

        Only the skills finally suggested count as used (one use each), not every hit of every message. The messages
        are encoded as one batch first (`SkillSearch.encode_all`).
        """
        cut = default_threshold() if threshold is None else threshold
        best: dict[str, ScoredSkill] = {}
        self.searcher.encode_all(queries)
        for query in queries:
            for found in self.search(query, k, count_use=False):
                if found.relevance is None or found.relevance < cut:
                    continue
                current = best.get(found.skill.skill_id)
                if current is None or found.relevance > (current.relevance or 0.0):
                    best[found.skill.skill_id] = found
        prior = self.config.search.fusion.prior
        top = sorted(best.values(), key=lambda h: (-(h.relevance or 0.0) * prior(h), -h.score))[:k]
        self._shown(top)
        return top

    def similar(self, skill: Skill, k: int = 5, *, same_scope: bool = True) -> list[ScoredSkill]:
        """Stored skills nearest to `skill` (for merging duplicates); see `SkillSearch.similar`. Counts no use."""
        self.record.catch_up()
        if self.catalog.count() == 0:
            return []
        self._writers.refresh_if_stale()
        return self.searcher.similar(skill, k, same_scope=same_scope)

    def _shown(self, hits: Sequence[ScoredSkill]) -> None:
        """These hits are returned to an agent: count a use of each, in the store and in the returned copies."""
        if not hits:
            return
        self.count_uses([h.skill.skill_id for h in hits])
        for hit in hits:
            hit.skill.uses += 1

    def count_uses(self, ids: list[str]) -> None:
        """Count one use of each skill (it was shown to an agent)."""
        self.catalog.record_uses(ids)
        with self._writers.thread_lock:
            self._dirty.update(ids)
            should_flush = len(self._dirty) >= self.config.flush_every
        if should_flush:
            # Off the request path: the catalog already holds the counts; Chroma's copy catches up.
            self._worker().submit(self.flush)
