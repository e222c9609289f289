"""The keyword side of search: BM25 over the catalog's FTS5 index, kept fast on large stores.

Two things keep it fast at 100k skills. Terms in more than a tenth of a large store are dropped from the query
(they add almost nothing to BM25 but make SQLite score every skill that contains them), and the scoring query
touches the FTS table alone, joining the ids of the top hits afterwards. The language, repo and tag filters are
tokens of a `facets` column, so FTS5 intersects posting lists instead of scoring skills it would then drop;
`min_confidence` is applied by over-fetching in proportion to the filter's selectivity.

Imports nothing heavy (no numpy, no Chroma): `quick_search` serves the Claude Code hook from the catalog alone.
"""

from __future__ import annotations

from pathlib import Path

from skills_store.catalog import Catalog
from skills_store.models import Skill
from skills_store.search.filters import Filters
from skills_store.search.plan import FilterPlan
from skills_store.search.query import analyze, fts_match_expression
from skills_store.search.relevance import RELEVANCE_DEPTH, Signature, hit_features, keyword_model

#: Query terms found in more than this fraction of the skills (and in more than COMMON_FLOOR) are not matched.
COMMON_FRACTION = 0.1
COMMON_FLOOR = 500
MAX_TERMS = 16
#: A filtered keyword search fetches at most this many unfiltered hits before keeping the matching ones.
MAX_KEYWORD_FETCH = 5000
#: BM25 column weights (title, pattern, strategy, tags): the pattern (what the agent sees) counts most.
BM25_WEIGHTS = (2.0, 4.0, 0.5, 1.5, 0.0)


class KeywordIndex:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._df_cache: dict[str, int] = {}
        self._df_generation: str | None = None

    def _check_cache(self) -> None:
        """Forget the document frequencies when the catalog was written since they were counted."""
        generation = self.catalog.get_meta("generation")
        if self._df_generation != generation:
            self._df_cache.clear()
            self._df_generation = generation

    def doc_freq(self, term: str) -> int:
        """How many skills contain `term` (cached until the next write; see `useful_terms`)."""
        if term not in self._df_cache:
            rows = self.catalog.rows(
                "SELECT count(*) FROM skills_fts WHERE skills_fts MATCH ?", [fts_match_expression([term])]
            )
            self._df_cache[term] = int(rows[0][0])
        return self._df_cache[term]

    def useful_terms(self, keywords: list[str], total: int) -> list[str]:
        """The query terms worth matching: at most `MAX_TERMS`, rarest first, without the very common ones.

        A term in more than `COMMON_FRACTION` of a large store adds almost nothing to BM25 but makes SQLite score
        every skill that contains it; at least the rarest term that occurs at all is always kept.
        """
        self._check_cache()
        freqs = [(self.doc_freq(k), i, k) for i, k in enumerate(keywords[: MAX_TERMS * 2])]
        present = sorted((df, i, k) for df, i, k in freqs if df > 0)
        limit = max(COMMON_FRACTION * total, COMMON_FLOOR)
        kept = [entry for entry in present if entry[0] <= limit] or present[:1]
        return [k for _, _, k in sorted(kept[:MAX_TERMS], key=lambda e: e[1])]

    def search(self, keywords: list[str], n: int, plan: FilterPlan | None = None) -> list[tuple[str, float]]:
        """BM25 over title/pattern/strategy/tags; best first, scores made positive (higher is better).

        With active filters, over-fetches in proportion to their selectivity and keeps the matching skills.
        """
        total = plan.total if plan is not None else self.catalog.count()
        if n <= 0 or total == 0:
            return []
        plan = plan or FilterPlan.unfiltered(total)
        filters = plan.filters
        match = fts_match_expression(self.useful_terms(keywords, total))
        if match is None or plan.matched == 0:
            return []
        facets = filters.fts_facets()
        if facets:
            # Language, repo and tags are tokens of the `facets` column: FTS5 intersects the posting lists.
            match = f"({match}) AND {facets}"
        fetch = n
        if filters.min_confidence > 0:
            fetch = min(total, MAX_KEYWORD_FETCH, int(n * total / plan.matched * 2) + n)
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        rows = self.catalog.rows(
            f"SELECT s.skill_id, k.score FROM (SELECT rowid AS r, bm25(skills_fts, {weights}) AS score"
            " FROM skills_fts WHERE skills_fts MATCH ? ORDER BY score LIMIT ?) k"
            " JOIN skills s ON s.rid = k.r ORDER BY k.score",
            [match, fetch],
        )
        if filters.active:
            allowed = plan.allowed(self.catalog, [r[0] for r in rows])
            rows = [r for r in rows if r[0] in allowed][:n]
        return [(sid, -float(score)) for sid, score in rows]


def quick_search(
    home: Path, query: str, k: int = 3, *, filters: Filters | None = None, threshold: float = 0.0
) -> list[Skill]:
    """Keyword-only search of the catalog under `home`, importing no model and no Chroma (for hooks): the active
    skills whose keyword-only relevance (`search.relevance`) reaches `threshold`, most relevant first.

    Relevance is computed over the first `RELEVANCE_DEPTH` hits whatever `k`, as the full search does (its margins
    compare a hit with the others). Returns [] when there is no catalog yet. Does not count uses.
    """
    path = home / "catalog.db"
    if not path.is_file():
        return []
    parts = analyze(query)
    depth = max(k, RELEVANCE_DEPTH)
    with Catalog(path, readonly=True) as catalog:
        total = catalog.count()
        plan = FilterPlan.make(catalog, filters or Filters(), total, exact_limit=100_000)
        hits = KeywordIndex(catalog).search(parts.keywords, 3 * depth, plan)
        found = {s.skill_id: s for s in catalog.get([sid for sid, _ in hits])}
    ranked = [(found[sid], bm25) for sid, bm25 in hits if sid in found and found[sid].status == "active"][:depth]
    sig, model = Signature.of(parts), keyword_model()
    scored: list[tuple[float, int, Skill]] = []
    for i, (skill, bm25) in enumerate(ranked):
        other = max((b for j, (_, b) in enumerate(ranked) if j != i), default=None)
        features = hit_features(
            sig,
            skill,
            cosine=None,
            other_cosine=None,
            bm25=bm25,
            other_bm25=other,
            ranks={"keyword": i + 1},
            fused=None,
        )
        relevance = model.predict(features)
        if relevance >= threshold:
            scored.append((relevance, i, skill))
    return [skill for _, _, skill in sorted(scored, key=lambda t: (-t[0], t[1]))[:k]]
