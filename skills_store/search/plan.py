"""The filter plan of one search: which skills the filters select, worked out once and shared by both sides.

Like a query planner, it decides from the filter's selectivity. At most `exact_limit` matches (found through the
catalog's indexes): their ids and stored vectors are read, and the vector side scores them exactly. More: only
their number is counted, and each side over-fetches in proportion to it and keeps the matches (`allowed`).
The SQL of these reads lives here; the catalog only runs it (`Catalog.rows`). numpy is imported only when
vectors are read, so the keyword-only hook path stays light.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skills_store.catalog import Catalog
from skills_store.search.filters import Filters

if TYPE_CHECKING:
    import numpy as np

#: SQLite's default limit of host parameters is 999; id lists are read in chunks below it.
_CHUNK = 900


@dataclass
class FilterPlan:
    filters: Filters
    candidates: list[str] | None
    """The matching ids when there are at most `exact_limit` of them, else None."""
    matched: int
    """How many skills match."""
    total: int
    vectors: np.ndarray | None = None
    """The candidates' stored vectors, row for row."""

    @classmethod
    def make(cls, catalog: Catalog, filters: Filters, total: int, exact_limit: int) -> FilterPlan:
        if not filters.active:
            return cls(filters, None, total, total)
        found = candidate_vectors(catalog, filters, exact_limit)
        if found is None:
            return cls(filters, None, count_matching(catalog, filters), total)
        ids, vectors = found
        return cls(filters, ids, len(ids), total, vectors)

    @classmethod
    def unfiltered(cls, total: int) -> FilterPlan:
        return cls(Filters(), None, total, total)

    def allowed(self, catalog: Catalog, skill_ids: Sequence[str]) -> set[str]:
        """The subset of `skill_ids` that the filters select."""
        if self.candidates is not None:
            return set(self.candidates).intersection(skill_ids)
        return filter_ids(catalog, skill_ids, self.filters)


def candidate_vectors(catalog: Catalog, filters: Filters, limit: int) -> tuple[list[str], np.ndarray] | None:
    """Ids and stored vectors of the skills matching `filters`; None when more than `limit` match.

    The ids are selected first (cheap, from the indexes); vectors are read only for a selective filter.
    """
    import numpy as np

    where, params = filters.sql()
    rids = [r[0] for r in catalog.rows(f"SELECT rid FROM skills s WHERE {where} LIMIT ?", [*params, limit + 1])]
    if len(rids) > limit:
        return None
    rows: list[tuple] = []
    for start in range(0, len(rids), _CHUNK):
        part = rids[start : start + _CHUNK]
        rows += catalog.rows(
            f"SELECT skill_id, embedding FROM skills WHERE rid IN ({','.join('?' * len(part))})"
            " AND embedding IS NOT NULL",
            part,
        )
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
    return [r[0] for r in rows], matrix


def count_matching(catalog: Catalog, filters: Filters) -> int:
    where, params = filters.sql()
    return int(catalog.rows(f"SELECT COUNT(*) FROM skills s WHERE {where}", params)[0][0])


def filter_ids(catalog: Catalog, skill_ids: Sequence[str], filters: Filters) -> set[str]:
    """The subset of `skill_ids` that matches `filters`."""
    if not skill_ids:
        return set()
    where, params = filters.sql()
    out: set[str] = set()
    for start in range(0, len(skill_ids), _CHUNK):
        part = list(skill_ids[start : start + _CHUNK])
        rows = catalog.rows(
            f"SELECT skill_id FROM skills s WHERE skill_id IN ({','.join('?' * len(part))}) AND {where}",
            [*part, *params],
        )
        out.update(r[0] for r in rows)
    return out
