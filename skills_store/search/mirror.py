"""An exact in-memory copy of the stored vectors: the vector side of an unfiltered search without Chroma.

Why: at 10k skills one Chroma query (its request validation, the Rust bindings, the HNSW walk, the id mapping)
costs 1-2 ms of a search that an agent waits for, while one float32 matrix-vector product over 10k x 384 plus an
`argpartition` costs ~0.3 ms, and it is exact, so it ranks at least as well as the HNSW index does.

The copy is read from the catalog, which already holds every skill's vector next to its JSON (`Catalog.upsert`)
and is kept in step with Chroma: this process's writes go to both, another instance's writes on a shared server are
copied in by `RecordSync.catch_up` before a search, and another process on the same data dir writes the same
SQLite file. Every catalog write transaction changes its `generation`, so a search that finds another generation
than the one the copy was read at reads the copy again (whole: writes are rare next to searches, and 10k vectors
read in tens of milliseconds). Chroma stays the store of record: writes, persistence and `where` filters.

Above `limit` vectors (1.5 KB each at 384 dimensions) no copy is held, and the vector side queries Chroma's index;
the same when the stored vectors do not have the query's dimension (an embedder change before `reembed`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from skills_store.catalog import Catalog


@dataclass(frozen=True)
class MirrorSnapshot:
    """The vectors of one catalog generation, row for row with `ids`. Read-only: a new generation is a new one."""

    generation: str | None
    dim: int
    ids: list[str]
    matrix: np.ndarray
    rows: dict[str, int] = field(default_factory=dict)

    def score(self, qv: np.ndarray) -> ExactScores:
        """Cosine similarity of `qv` to every stored vector (both are unit length)."""
        return ExactScores(self, matvec(self.matrix, qv))


BLOCK_ROWS = 256
"""Rows per product in `matvec`: small enough that OpenBLAS computes each in the calling thread."""


def matvec(matrix: np.ndarray, qv: np.ndarray) -> np.ndarray:
    """`matrix @ qv` in blocks of `BLOCK_ROWS` rows, in this thread.

    Why not one product: above a size OpenBLAS splits a matrix-vector product over its threads, and those threads
    then busy-wait ~100 ms for the next one (measured: 100 ms of a core burnt in the 100 ms after one 10k x 384
    product). On a 2-core machine that takes a core from the embedder worker and the client for the next requests;
    the single-threaded blocks cost 0.54 ms against 0.27 ms at 10k, and burn nothing afterwards.
    """
    q = np.asarray(qv, dtype=np.float32)
    out = np.empty(len(matrix), dtype=np.float32)
    for start in range(0, len(matrix), BLOCK_ROWS):
        np.dot(matrix[start : start + BLOCK_ROWS], q, out=out[start : start + BLOCK_ROWS])
    return out


@dataclass(frozen=True)
class ExactScores:
    """One query's cosine to every vector of a snapshot."""

    snapshot: MirrorSnapshot
    sims: np.ndarray

    def nearest(self, n: int) -> list[tuple[str, float]]:
        """The `n` most similar as (id, cosine), best first; ties in stored order."""
        ids, sims = self.snapshot.ids, self.sims
        n = min(n, len(ids))
        if n <= 0:
            return []
        top = np.argpartition(-sims, n - 1)[:n] if n < len(ids) else np.arange(len(ids))
        top = top[np.lexsort((top, -sims[top]))]
        return [(ids[i], float(sims[i])) for i in top]

    def cosines(self, skill_ids: list[str]) -> dict[str, float]:
        """The cosines of those of `skill_ids` that have a stored vector."""
        rows = self.snapshot.rows
        return {sid: float(self.sims[rows[sid]]) for sid in skill_ids if sid in rows}


class VectorMirror:
    """The catalog's vectors in memory, read again whenever the catalog's generation changed."""

    def __init__(self, catalog: Catalog, limit: int) -> None:
        self.catalog = catalog
        self.limit = limit
        """No copy is held above this many stored vectors (0: never)."""
        self._snapshot: MirrorSnapshot | None = None
        self._refused: tuple[str | None, int] | None = None
        """(generation, dim) at which no copy could be held (too many vectors, or vectors of another dimension):
        not read again until the catalog changes."""
        self._lock = threading.Lock()
        self.loads = 0
        """How many times the copy was read (for tests and profiles)."""

    def snapshot(self, dim: int) -> MirrorSnapshot | None:
        """The copy for the catalog as it is now, or None where the vector side must query Chroma."""
        if self.limit <= 0:
            return None
        generation = self.catalog.get_meta("generation")
        current = self._snapshot
        if current is None or (current.generation, current.dim) != (generation, dim):
            if self._refused == (generation, dim):
                return None
            with self._lock:
                current = self._snapshot
                if current is None or (current.generation, current.dim) != (generation, dim):
                    current = self._load(generation, dim)
        return current

    def _load(self, generation: str | None, dim: int) -> MirrorSnapshot | None:
        # The generation was read before the rows: a write landing in between makes the copy newer than its label,
        # and the next search reads it again, never the other way round.
        if self.catalog.count() > self.limit:
            self._snapshot, self._refused = None, (generation, dim)
            return None
        rows = self.catalog.rows("SELECT skill_id, embedding FROM skills WHERE embedding IS NOT NULL ORDER BY rid")
        if len(rows) != sum(1 for r in rows if len(r[1]) == 4 * dim):
            # Vectors of another dimension (an embedder change before `reembed`): Chroma answers until then.
            self._snapshot, self._refused = None, (generation, dim)
            return None
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
        matrix = matrix.astype(np.float32)  # native order, a copy owned by the snapshot
        ids = [r[0] for r in rows]
        self._snapshot = MirrorSnapshot(generation, dim, ids, matrix, {sid: i for i, sid in enumerate(ids)})
        self._refused = None
        self.loads += 1
        return self._snapshot
