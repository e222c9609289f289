"""The search entry point: one query through filters, both sides, fusion, hydration and the confidence prior.

    filters (validated by the bank) -> FilterPlan (once, shared)
    query   -> analyze -> keywords -> KeywordIndex (SQLite FTS5)
                       -> embed_text -> embedder -> vector_hits (the exact in-memory copy of the vectors, Chroma's
                                                   HNSW index for a store too large to copy, or exact over the
                                                   candidates of a selective filter)
    both rankings -> fuse (RRF, weights by query kind) -> hydrate from the catalog (active skills only)
                  -> relevance (calibrated, `search.relevance`) -> order by relevance x confidence prior

With the model in an embedder worker process (the server's case), the keyword side runs in the calling thread
while the worker encodes the query (`embed_during`). In-process on the 2-core machine, 10k skills, short queries,
medians of three alternating rounds: 25 ms after the previous search (an agent's searches are seconds apart, and
an encode after an idle gap waits on memory more than on the cores) 14.1 -> 10.8-12.9 ms; back to back, when the
model's two threads take both cores, 6.2-6.6 -> 6.2-6.7 ms. Otherwise both sides run one after the other.

`SkillBank` owns the consistency around a search (refreshing a stale index, counting uses); this module only
ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skills_store.catalog import Catalog
from skills_store.models import Skill
from skills_store.search.filters import Filters
from skills_store.search.fusion import FusionConfig, Ranked, ScoredSkill, SearchMode, fuse
from skills_store.search.keyword import KeywordIndex
from skills_store.search.mirror import ExactScores, VectorMirror
from skills_store.search.plan import FilterPlan
from skills_store.search.query import QueryParts, analyze
from skills_store.search.relevance import RELEVANCE_DEPTH, Signature, hit_features, hybrid_model, keyword_model
from skills_store.search.vector import stored_cosines, vector_hits

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np

    from skills_store.locks import ReadWriteLock
    from skills_store.protocols import Embedder, SkillStore


@dataclass
class SearchConfig:
    exact_limit: int = 4096
    """Filtered searches that leave at most this many candidates score them exactly (no ANN)."""
    pool: int = 25
    """How many hits each side contributes before fusion (at least 4 x k)."""
    mirror_limit: int = 25_000
    """Up to this many skills, the vector side scores an in-memory copy of every vector exactly (1.5 KB a skill at
    384 dimensions; `search.mirror`); above, it queries Chroma's HNSW index. 0: always Chroma."""
    fusion: FusionConfig = field(default_factory=FusionConfig)


class SkillSearch:
    """Hybrid search over one bank's record (Chroma) and catalog (SQLite)."""

    def __init__(
        self,
        store: SkillStore,
        catalog: Catalog,
        embedder: Embedder,
        config: SearchConfig,
        *,
        queries: ReadWriteLock,
    ) -> None:
        self.store = store
        self.catalog = catalog
        self.embedder = embedder
        self.config = config
        self.keywords = KeywordIndex(catalog)
        self.mirror = VectorMirror(catalog, config.mirror_limit)
        self._queries = queries
        """Held shared around vector queries: the bank reopens the Chroma client under it, exclusively."""
        self._analyzed: tuple[str, QueryParts] | None = None
        """The last query `prefetch` analysed, for the search that follows (an 8,000-character query takes ~1 ms)."""

    def search(
        self, query: str, k: int, filters: Filters, mode: SearchMode = "hybrid", *, total: int | None = None
    ) -> list[ScoredSkill]:
        """The best `k` skills for `query` among those `filters` select, best first. Counts no use.

        `total` is the number of stored skills when the caller has just counted them.
        """
        total = self.catalog.count() if total is None else total
        if total == 0:
            return []
        plan = FilterPlan.make(self.catalog, filters, total, self.config.exact_limit)
        analyzed = self._analyzed
        parts = analyzed[1] if analyzed is not None and analyzed[0] == query else analyze(query)
        pool = max(self.config.pool, 4 * k)
        vec: list[tuple[str, float]] = []
        qv, exact = None, None
        if mode == "keyword":
            kw = self.keywords.search(parts.keywords, pool, plan)
        else:
            if mode == "hybrid":
                qv, kw = self._embed_during(parts.embed_text, lambda: self.keywords.search(parts.keywords, pool, plan))
            else:
                qv, kw = self.embedder.embed([parts.embed_text])[0], []
            exact = self._exact(qv) if plan.candidates is None else None  # a selective filter scores its candidates
            with self._queries.read():
                vec = vector_hits(self.store, self.catalog, qv, pool, plan, exact)
        ranked = fuse(vec, kw, mode, self.config.fusion, error_query=bool(parts.error_lines))
        if mode == "vector":
            return self._hydrate(ranked, k)
        # Relevance is computed over the same RELEVANCE_DEPTH hits whatever `k` (its margins compare a hit with the
        # others), and the order by relevance decides which `k` are returned.
        out = self._hydrate(ranked, max(k, RELEVANCE_DEPTH))
        self._relevance(out, parts, dict(vec) if qv is not None else None, dict(kw), qv, exact)
        if mode == "keyword":
            out = sorted(out, key=lambda h: (-(h.relevance or 0.0), -h.score))
        return (self.config.fusion.rerank_by_confidence(out) if mode == "hybrid" else out)[:k]

    def prefetch(self, query: str) -> bool:
        """Start encoding what `search(query, ...)` will embed, ahead of it, where the embedder can without waiting
        (a worker process: see `embedders.worker`). Whether anything was sent; nothing else changes."""
        prefetch = getattr(self.embedder, "prefetch", None)
        if prefetch is None:
            return False
        parts = analyze(query)
        self._analyzed = (query, parts)
        return bool(prefetch(parts.embed_text))

    def encode_all(self, queries: Sequence[str]) -> None:
        """Encode what searching each of `queries` will embed, as one batch, where the embedder keeps what it encodes
        (`CachedEmbedder.warm`; the searches then find their vectors there): a test run's failure messages cost the
        model one pass instead of one each (5 short messages, in-process with the worker at 10k skills, alternating:
        35.7 -> 30.8 and 34.5 -> 29.8 ms on a quiet machine, 56.5 -> 44.7 under load)."""
        warm = getattr(self.embedder, "warm", None)
        if warm is not None and len(queries) > 1:
            warm(list(dict.fromkeys(analyze(query).embed_text for query in queries)))

    def _embed_during(
        self, text: str, keyword_side: Callable[[], list[tuple[str, float]]]
    ) -> tuple[np.ndarray, list[tuple[str, float]]]:
        """The query's vector and the keyword side's hits, the latter computed while an embedder worker process
        encodes (when the embedder has one; in turn otherwise)."""
        during = getattr(self.embedder, "embed_during", None)
        if during is None:
            return self.embedder.embed([text])[0], keyword_side()
        vectors, hits = during([text], keyword_side)
        return vectors[0], hits

    def _exact(self, qv: np.ndarray) -> ExactScores | None:
        """The query scored against the in-memory copy of the vectors; None where Chroma answers (`search.mirror`)."""
        snapshot = self.mirror.snapshot(len(qv))
        return snapshot.score(qv) if snapshot is not None else None

    def _hydrate(self, ranked: Ranked, k: int) -> list[ScoredSkill]:
        """The first `k` ranked ids that the catalog still holds as active skills (candidates await review; a
        concurrent delete drops one)."""
        out: list[ScoredSkill] = []
        for start in range(0, len(ranked), k * 2):
            chunk = ranked[start : start + k * 2]
            skills = {s.skill_id: s for s in self.catalog.get([sid for sid, _, _ in chunk])}
            for sid, score, ranks in chunk:
                if sid in skills and skills[sid].status == "active":
                    out.append(ScoredSkill(skills[sid], score, ranks))
                if len(out) == k:
                    return out
        return out

    def _relevance(
        self,
        hits: list[ScoredSkill],
        parts: QueryParts,
        cosines: dict[str, float] | None,
        bm25: dict[str, float],
        qv: np.ndarray | None,
        exact: ExactScores | None = None,
    ) -> None:
        """Give each hit its calibrated relevance; hits the vector side did not return get their exact cosine."""
        if not hits:
            return
        if cosines is not None and qv is not None:
            missing = [h.skill.skill_id for h in hits if h.skill.skill_id not in cosines]
            cosines.update(exact.cosines(missing) if exact is not None else stored_cosines(self.catalog, missing, qv))
        model = hybrid_model() if cosines is not None else keyword_model()
        sig = Signature.of(parts)
        for hit in hits:
            sid = hit.skill.skill_id
            others = [h.skill.skill_id for h in hits if h.skill.skill_id != sid]
            hit.features = hit_features(
                sig,
                hit.skill,
                cosine=cosines.get(sid, 0.0) if cosines is not None else None,
                other_cosine=max((cosines.get(o, 0.0) for o in others), default=None) if cosines is not None else None,
                bm25=bm25.get(sid),
                other_bm25=max((bm25.get(o, 0.0) for o in others), default=None),
                ranks=hit.ranks,
                fused=hit.score if cosines is not None else None,
            )
            hit.relevance = model.predict(hit.features)

    def similar(self, skill: Skill, k: int = 5, *, same_scope: bool = True) -> list[ScoredSkill]:
        """Stored skills nearest to `skill` by cosine similarity of their documents (for merging duplicates).

        With `same_scope`, only skills of the same language and repo are considered. Counts no use.
        """
        total = self.catalog.count()
        if total == 0:
            return []
        qv = self.embedder.embed([skill.document()])[0]
        filters = Filters(skill.language, skill.repo) if same_scope else Filters()
        plan = FilterPlan.make(self.catalog, filters, total, self.config.exact_limit)
        exact = self._exact(qv)
        with self._queries.read():
            hits = vector_hits(self.store, self.catalog, qv, k + 1, plan, exact)
        found = {s.skill_id: s for s in self.catalog.get([sid for sid, _ in hits])}
        out = [
            ScoredSkill(found[sid], sim, {"vector": i + 1})
            for i, (sid, sim) in enumerate(hits)
            if sid in found
            and sid != skill.skill_id
            and (not same_scope or (found[sid].language, found[sid].repo) == (skill.language, skill.repo))
        ]
        return out[:k]
