"""The vector side of search: the skills nearest to a query vector that match the filters.

The plan (`search.plan`) decides how, from the filter's selectivity:
- no filter: the exact in-memory copy of the vectors (`search.mirror`), or the HNSW index (Chroma) for a store
  too large to copy;
- a selective filter (at most `exact_limit` matches): exact cosine scores over the matching skills' stored
  vectors, faster than Chroma's `where` (~60 ms at 100k skills) and exact;
- an unselective filter: over-fetch (from the copy, else the HNSW index) in proportion to the selectivity and keep
  the matches, falling back to Chroma's `where` only when too few survive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skills_store.catalog import Catalog
from skills_store.search.mirror import matvec
from skills_store.search.plan import FilterPlan

if TYPE_CHECKING:
    from skills_store.protocols import SkillStore
    from skills_store.search.mirror import ExactScores


def vector_hits(
    store: SkillStore, catalog: Catalog, qv: np.ndarray, n: int, plan: FilterPlan, exact: ExactScores | None = None
) -> list[tuple[str, float]]:
    """The `n` skills nearest to `qv` that match the plan's filters, with cosine similarity, best first.

    `exact`: the query's scores against the in-memory copy of the vectors, used instead of Chroma's index.
    """
    filters, total, candidates, matched = plan.filters, plan.total, plan.candidates, plan.matched

    def nearest(count: int) -> list[tuple[str, float]]:
        return exact.nearest(count) if exact is not None else store.query(qv, count)

    if not filters.active:
        return nearest(min(n, total))
    if matched == 0:
        return []
    if candidates is not None and plan.vectors is not None:
        sims = matvec(plan.vectors, qv)
        top = np.argsort(-sims)[:n]
        return [(candidates[i], float(sims[i])) for i in top]
    want = min(total, int(n * total / max(matched, 1) * 1.5) + n)
    hits = nearest(want)
    allowed = plan.allowed(catalog, [sid for sid, _ in hits])
    kept = [(sid, sim) for sid, sim in hits if sid in allowed][:n]
    if len(kept) < min(n, matched) and want < total:
        kept = store.query(qv, min(n, matched), where=filters.chroma_where())
    return kept


def stored_cosines(catalog: Catalog, skill_ids: list[str], qv: np.ndarray) -> dict[str, float]:
    """Exact cosine similarity of `qv` to the stored vectors of `skill_ids` (hits only the keyword side found)."""
    if not skill_ids:
        return {}
    rows = catalog.rows(
        f"SELECT skill_id, embedding FROM skills WHERE skill_id IN ({','.join('?' * len(skill_ids))})"
        " AND embedding IS NOT NULL",
        skill_ids,
    )
    q = qv.astype(np.float32)
    return {sid: float(np.frombuffer(blob, dtype="<f4") @ q) for sid, blob in rows if len(blob) == 4 * len(q)}
