"""Keeping the catalog in line with the record: Chroma holds every skill and vector, the catalog a copy of both.

The catalog (`catalog.db`) can always be rebuilt from Chroma, so after a crash between the two writes, or after
another skillbank wrote to a shared Chroma server, the catalog is re-read from it (`sync`). The vectors must come
from one embedder: a bank opened with another one is refused until every skill is embedded again (`reembed`),
which an interrupted run resumes on the next open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skills_store.catalog import Catalog
from skills_store.errors import ConfigError

if TYPE_CHECKING:
    from skills_store.locks import WriterLock
    from skills_store.protocols import Embedder, SkillStore


class RecordSync:
    def __init__(self, store: SkillStore, catalog: Catalog, embedder: Embedder, writers: WriterLock) -> None:
        self.store = store
        self.catalog = catalog
        self.embedder = embedder
        self.writers = writers

    @property
    def ident(self) -> str:
        return f"{self.embedder.name}:{self.embedder.dim}"

    def check_embedder(self) -> None:
        """Refuse (`ConfigError`) a bank whose skills were embedded by another embedder than this one."""
        stored = self.catalog.get_meta("embedder")
        if stored is None or self.catalog.count() == 0:
            self.catalog.set_meta("embedder", self.ident)
        elif stored != self.ident:
            raise ConfigError(
                f"the skills in {self.catalog.path.parent} were embedded with {stored}, not {self.ident}: "
                "run `skillbank skills reindex --reembed` or use the embedder they were built with"
            )

    def reembed(self, batch: int = 512) -> int:
        """Embed every skill again with this bank's embedder, into a fresh Chroma collection.

        The catalog keeps every skill meanwhile; an interrupted run resumes on the next open.
        """
        ids = self.catalog.iter_ids()
        with self.writers.exclusive():
            self.catalog.set_meta("reembedding", "1")
            self.store.recreate()
        for start in range(0, len(ids), batch):
            skills = self.catalog.get(ids[start : start + batch])
            vectors = self.embedder.embed([s.document() for s in skills])
            with self.writers.exclusive():
                self.store.upsert(skills, vectors)
                self.catalog.upsert(skills, vectors)
        self.catalog.set_meta("embedder", self.ident)
        self.catalog.set_meta("reembedding", "")
        return len(ids)

    @property
    def reembedding(self) -> bool:
        """A re-embedding was started and has not finished."""
        return bool(self.catalog.get_meta("reembedding"))

    def sync(self) -> int:
        """Bring the catalog in line with Chroma (after a crash or another writer); returns skills re-read."""
        if self.store.count() == self.catalog.count():
            return 0
        return self.rebuild_catalog()

    def rebuild_catalog(self) -> int:
        """Re-read every skill and vector from Chroma into the catalog; skills only the catalog has are dropped."""
        with self.writers.exclusive():
            records = self.store.iter_all()
            stale: set[str] = set(self.catalog.iter_ids()) - {s.skill_id for s, _ in records}
            self.catalog.delete(sorted(stale))
            if records:
                self.catalog.upsert([s for s, _ in records], np.stack([v for _, v in records]))
            return len(records)
