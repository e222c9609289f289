"""Keeping the catalog in line with the record: Chroma holds every skill and vector, the catalog a copy of both.

Every write is two writes, Chroma's (in batches of 1000) and then the catalog's (one transaction). Before the first,
the writer stores the ids it is about to write (`pending`, under the writers' lock); the catalog's commit clears
them in the same transaction. A marker found on open by a process that gets the writers' lock (so no writer is
running) is a write that died between the two: the catalog wins, since it holds what last committed, and those ids
are put back into Chroma from it (`restore_pending`): a killed import leaves neither half of itself, an outcome
killed before its catalog commit is not counted. Without a marker, a catalog whose count disagrees with Chroma
(another writer on a shared server, a store copied in) is re-read from it (`sync`, `rebuild_catalog`). The vectors
must come from one embedder: a bank opened with another one is refused until every skill is embedded again
(`reembed`), which an interrupted run resumes on the next open.

Instances sharing one Chroma server (`SKILLBANK_CHROMA_URL`) each keep their own catalog. A write by another
instance changes that instance's marker token (see `chroma_store`); `catch_up` compares the tokens with those this
catalog last synced from (one small read, at most once per `check_interval_s`, on the search path) and, when one
changed, re-reads the skills written since the last sync (less a clock-skew margin) and drops the ids Chroma no
longer has. A skill count is not enough: an edit, a merge that keeps the count, a use-count flush change no count.
While the server does not answer (`StoreUnreachable`), a check is skipped with a warning and the search is served
from the catalog as it is; writes fail, naming the server, and nothing is half-written (see above).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from skills_store.catalog import Catalog
from skills_store.errors import ConfigError, StoreUnreachable
from skills_store.models import Skill

if TYPE_CHECKING:
    from skills_store.locks import WriterLock
    from skills_store.protocols import Embedder, SkillStore


log = logging.getLogger(__name__)

CLOCK_SKEW_NS = 120 * 10**9
"""A catch-up re-reads what was written this long before its last sync too: instances' clocks may disagree."""


def writer_id(catalog: Catalog) -> str:
    """This data dir's writer id on a shared Chroma server (made once, kept in the catalog)."""
    found = catalog.get_meta("writer")
    if not found:
        found = uuid.uuid4().hex
        catalog.set_meta("writer", found)
    return found


class RecordSync:
    def __init__(
        self,
        store: SkillStore,
        catalog: Catalog,
        embedder: Embedder,
        writers: WriterLock,
        *,
        check_interval_s: float = 0.25,
    ) -> None:
        self.store = store
        self.catalog = catalog
        self.embedder = embedder
        self.writers = writers
        self.check_interval_s = check_interval_s
        """`catch_up` reads the markers at most once per this many seconds (0: before every search)."""
        self._checked = -float("inf")
        self._checking = threading.Lock()

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

        The catalog keeps every skill meanwhile; an interrupted run resumes on the next open. Each batch is read
        again under the writers' lock before it is written, so an outcome, an edit or a delete made meanwhile by
        another process is kept (an edited text is embedded again there).
        """
        ids = self.catalog.iter_ids()
        with self.writers.exclusive():
            self.catalog.set_meta("reembedding", "1")
            self.store.recreate()
            self.catalog.set_meta("pending", "")  # the collection is rebuilt from the catalog: nothing to restore
        for start in range(0, len(ids), batch):
            read = self.catalog.get(ids[start : start + batch])
            vectors = self.embedder.embed([s.document() for s in read])
            with self.writers.exclusive():
                skills = self.catalog.get([s.skill_id for s in read])  # deleted meanwhile: not written back
                embedded = {s.skill_id: (s.document(), v) for s, v in zip(read, vectors, strict=True)}
                redo = [s for s in skills if embedded[s.skill_id][0] != s.document()]
                again = {}
                if redo:  # edited meanwhile: embed the text that is written
                    again = dict(
                        zip([s.skill_id for s in redo], self.embedder.embed([s.document() for s in redo]), strict=True)
                    )
                rows = np.stack([again.get(s.skill_id, embedded[s.skill_id][1]) for s in skills]) if skills else None
                self.write(skills, rows)
        self.catalog.set_meta("embedder", self.ident)
        self.catalog.set_meta("reembedding", "")
        return len(ids)

    def write(self, skills: list[Skill], vectors: np.ndarray | None, *, remove: Sequence[str] = ()) -> None:
        """Write `skills` (with their vectors; None: keep the stored ones) and delete `remove`, to Chroma and then
        to the catalog (one transaction): one write that lands whole or, if it dies, not at all (`restore_pending`).

        The caller holds the writers' lock.
        """
        if not skills and not remove:
            return
        self.pending([*(s.skill_id for s in skills), *remove])
        if vectors is None:
            self.store.update_metadata(skills)
        else:
            self.store.upsert(skills, vectors)
        self.store.delete(remove)
        self.catalog.upsert(skills, vectors, remove=remove)

    def pending(self, skill_ids: list[str]) -> None:
        """Mark these ids as being written to Chroma (the caller holds the writers' lock); see the module doc.

        A marker already set is a write that died (this one holds the lock): it is restored first, not overwritten.
        """
        if self.catalog.get_meta("pending"):
            self.restore_pending()
        self.catalog.set_meta("pending", json.dumps(skill_ids))

    def restore_pending(self) -> int:
        """A writer died between its Chroma write and its catalog commit: put those ids back into Chroma as the
        catalog has them (deleting those it does not have); returns how many. Nothing while another process is
        writing (its marker is its own, live) or when no marker is set."""
        if not self.catalog.get_meta("pending"):
            return 0
        with self.writers.exclusive_if_free() as free:
            ids = json.loads(self.catalog.get_meta("pending") or "[]") if free else []
            if not ids:
                return 0
            self.writers.reopen()  # this process's Chroma client has not seen the dead writer's part
            kept: list[Skill] = []
            vectors: list[np.ndarray] = []
            for start in range(0, len(ids), 500):
                skills, part_vectors = self._catalog_rows(ids[start : start + 500])
                kept += skills
                vectors += part_vectors
            gone = sorted(set(ids) - {s.skill_id for s in kept})
            self.store.delete(gone)
            if kept:
                self.store.upsert(kept, np.stack(vectors))
            self.catalog.upsert([], None)  # clears the marker; a new generation makes other processes reopen Chroma
            return len(ids)

    @property
    def reembedding(self) -> bool:
        """A re-embedding was started and has not finished."""
        return bool(self.catalog.get_meta("reembedding"))

    def sync(self) -> int:
        """Bring the catalog in line with Chroma (after a crash or another writer); returns skills re-read.

        An empty record beside a catalog that holds skills was lost, not emptied (deleting goes through both): a
        `chroma/` dir missing or replaced, a shared server that lost its data (no writer's marker on it). It is
        restored from the catalog, which holds every skill and vector; re-reading it would have emptied the catalog
        too. A shared server that some writer has marked and that holds no skill was emptied: the catalog follows.
        """
        restored = self.restore_pending()
        record = self.store.count()
        if record != self.catalog.count() and not self.catalog.get_meta("pending"):
            if record == 0 and not self.store.marked():
                return self.restore_record()
            return self.rebuild_catalog()
        return restored + self.catch_up(force=True)

    def restore_record(self) -> int:
        """Write every skill of the catalog, with its stored vector, back into an empty record; returns how many."""
        with self.writers.exclusive():
            if self.store.count():  # another process restored it meanwhile
                return 0
            marks, started = self.store.revisions(), time.time_ns()
            ids = self.catalog.iter_ids()
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                skills, vectors = self._catalog_rows(part)
                self.store.upsert(skills, np.stack(vectors))
            self._synced(marks, started)
        log.warning(
            "the skill record at %s held no skill while %s held %d: it was missing or replaced, so the %d skills "
            "were written back into it from the catalog",
            self.store.location, self.catalog.path, len(ids), len(ids),
        )  # fmt: skip
        return len(ids)

    def _catalog_rows(self, skill_ids: list[str]) -> tuple[list[Skill], list[np.ndarray]]:
        """These skills as the catalog has them, with their vectors (embedded again where one is missing)."""
        skills: list[Skill] = []
        vectors: list[np.ndarray] = []
        for data, blob in self.catalog.rows(
            f"SELECT data, embedding FROM skills WHERE skill_id IN ({','.join('?' * len(skill_ids))})", skill_ids
        ):
            skills.append(Skill.model_validate_json(data))
            vector = np.frombuffer(blob, dtype="<f4") if blob is not None else None
            if vector is None or vector.shape[0] != self.embedder.dim:
                vector = self.embedder.embed([skills[-1].document()])[0]
            vectors.append(vector)
        return skills, vectors

    def rebuild_catalog(self) -> int:
        """Re-read every skill and vector from Chroma into the catalog; skills only the catalog has are dropped."""
        with self.writers.exclusive():
            self.restore_pending()  # a write that died half-way is undone first, not made live (see the module doc)
            marks, started = self.store.revisions(), time.time_ns()
            records = self.store.iter_all()
            stale: set[str] = set(self.catalog.iter_ids()) - {s.skill_id for s, _ in records}
            self.catalog.delete(sorted(stale))
            if records:
                self.catalog.upsert([s for s, _ in records], np.stack([v for _, v in records]))
            self._synced(marks, started)
            return len(records)

    def catch_up(self, *, force: bool = False) -> int:
        """Another instance on a shared server wrote: copy its changes into this catalog; returns skills re-read.

        Cheap when nothing changed (one read of the markers, rate-limited unless `force`). Concurrent callers
        do not queue: one checks, the others search with the catalog as it is.
        """
        now = time.monotonic()
        if not force and now - self._checked < self.check_interval_s:
            return 0
        if not self._checking.acquire(blocking=force):
            return 0
        try:
            self._checked = now
            try:
                marks = self.store.revisions()
                if marks == json.loads(self.catalog.get_meta("chroma_marks") or "{}"):
                    return 0
                with self.writers.exclusive():
                    self.restore_pending()  # before the catalog's commits below would clear a dead writer's marker
                    # The markers were read before the records: a write that lands meanwhile changes them again.
                    started = time.time_ns()
                    since = int(self.catalog.get_meta("chroma_synced_ns") or 0) - CLOCK_SKEW_NS
                    present = set(self.store.ids())
                    stale = sorted(set(self.catalog.iter_ids()) - present)
                    self.catalog.delete(stale)
                    changed = self.store.written_since(max(since, 0))
                    missing = present - {s.skill_id for s, _ in changed} - set(self.catalog.iter_ids())
                    if missing:
                        known = {s.skill_id: (s, v) for s, v in self.store.iter_all()}
                        changed += [known[i] for i in sorted(missing) if i in known]
                    if changed:
                        self.catalog.upsert([s for s, _ in changed], np.stack([v for _, v in changed]))
                    self._synced(marks, started)
                    return len(changed) + len(stale)
            except StoreUnreachable as exc:  # what was copied is kept; the next check starts over
                log.warning("searching this instance's catalog as it is: %s", exc)
                return 0
        finally:
            self._checking.release()

    def _synced(self, marks: dict[str, str], started_ns: int) -> None:
        self.catalog.set_meta("chroma_marks", json.dumps(marks, sort_keys=True))
        self.catalog.set_meta("chroma_synced_ns", str(started_ns))
