"""`ChromaSkillStore`: the system of record for skills and their vectors.

Embedded (`PersistentClient` under the data dir) by default; `url=http://host:8000` uses a Chroma server through
`HttpClient` with the same code. Every record carries the whole skill as JSON in its metadata, so the catalog
(keyword index, filters) can always be rebuilt from Chroma alone.

Chroma never embeds anything here: vectors are always computed by our embedder and passed in. The collection is
bound to `SkillbankEmbeddingFunction`, registered with Chroma, so Chroma's default embedding function (which
downloads a model) is never instantiated.

Shared server (`url=`): several skillbank instances, each with its own catalog, write to one collection. Each
instance owns one record in a small side collection (`skillbank-skills-revisions`, id = its writer id) and gives it a
new token after each of its writes; another instance compares those tokens (`revisions`) to the ones it last
synced from and, when one changed, reads what changed (`written_since`, `ids`). Each writer writes only its own
record, so two writers never race on one counter; a token changes only after the write it marks is stored.

A server that stops answering after the store opened (stopped, restarted, network gone) makes each call raise
`StoreUnreachable`, a `SkillStoreError` naming the URL, instead of the HTTP client's own exception; the client
reconnects by itself once the server answers again at the same address.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlparse

import httpx
import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from skills_store.datadir import creating
from skills_store.errors import ConfigError, SkillStoreError, StoreUnreachable
from skills_store.models import Skill

P = ParamSpec("P")
R = TypeVar("R")

COLLECTION = "skillbank-skills"
REVISIONS = "-revisions"
"""Suffix of the side collection of change markers on a shared server: one record per writing instance."""


@register_embedding_function
class SkillbankEmbeddingFunction(EmbeddingFunction[Documents]):
    """Marks the collection as embedded by skillbank. Calling it is a bug: vectors are always precomputed."""

    def __init__(self, embedder: str = "skillbank") -> None:
        self.embedder = embedder

    def __call__(self, input: Documents) -> Embeddings:
        raise SkillStoreError("skillbank passes precomputed embeddings; Chroma must not embed documents itself")

    @staticmethod
    def name() -> str:
        return "skillbank"

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self.embedder}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> SkillbankEmbeddingFunction:
        return SkillbankEmbeddingFunction(str(config.get("embedder", "skillbank")))

    def is_legacy(self) -> bool:
        return False


def _reaching(method: Callable[Concatenate[ChromaSkillStore, P], R]) -> Callable[Concatenate[ChromaSkillStore, P], R]:
    """`method` with the HTTP client's transport errors (refused, reset, timed out) raised as `StoreUnreachable`."""

    @functools.wraps(method)
    def wrapper(self: ChromaSkillStore, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except httpx.TransportError as exc:
            raise StoreUnreachable(
                f"the Chroma server at {self.location} did not answer ({type(exc).__name__}: {exc}); start it "
                "again at that address (skillbank reconnects by itself) or point SKILLBANK_CHROMA_URL at a live one"
            ) from exc

    return wrapper


def skill_metadata(skill: Skill, written_ns: int = 0) -> dict[str, Any]:
    """Chroma metadata: the whole skill as JSON plus flat fields for Chroma-side `where` filters.

    `written_ns` (wall clock of the write) lets another instance re-read only what changed since it last synced.
    """
    meta: dict[str, Any] = {
        "skill": skill.model_dump_json(),
        "written_ns": written_ns or time.time_ns(),
        "confidence": float(skill.confidence),
        "updated_ts": skill.updated_at.timestamp(),
        "language": skill.language or "",
        "repo": skill.repo or "",
    }
    for tag in skill.tags:
        meta[f"tag:{tag}"] = True
    return meta


class ChromaSkillStore:
    def __init__(
        self,
        *,
        path: Path | None = None,
        url: str | None = None,
        collection: str = COLLECTION,
        embedder: str = "",
        writer: str = "",
    ) -> None:
        if (path is None) == (url is None):
            raise ConfigError("ChromaSkillStore needs exactly one of a data path or a server url")
        self._path, self._url, self._name, self._embedder = path, url, collection, embedder or "skillbank"
        self.location = str(path) if path is not None else str(url)
        self.writer = writer or uuid.uuid4().hex
        """This instance's change marker on a shared server (stable per data dir: see `RecordSync`)."""
        self._marks: Any = None
        self._connect()

    def _connect(self) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        path, url, where = self._path, self._url, self.location
        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        try:
            if url is not None:
                parsed = urlparse(url)
                if parsed.scheme not in ("http", "https") or not parsed.hostname:
                    raise ConfigError(f"SKILLBANK_CHROMA_URL={url!r} is not an http(s) URL like http://host:8000")
                self._client = chromadb.HttpClient(
                    host=parsed.hostname,
                    port=parsed.port or (443 if parsed.scheme == "https" else 80),
                    ssl=parsed.scheme == "https",
                    settings=chroma_settings,
                )
                self._open_collections()
            else:
                assert path is not None
                # Chroma migrates a new chroma.sqlite3 on first open: one process at a time per data dir.
                with creating(path.parent):
                    path.mkdir(parents=True, exist_ok=True)
                    self._client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
                    self._open_collections()
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(f"cannot open the Chroma skill store at {where}: {exc}") from exc

    def _open_collections(self) -> None:
        self._col = self._client.get_or_create_collection(
            self._name,
            embedding_function=SkillbankEmbeddingFunction(self._embedder),  # type: ignore[arg-type]
            metadata={"hnsw:space": "cosine"},
        )
        if self._url is not None:
            self._marks = self._client.get_or_create_collection(
                self._name + REVISIONS,
                embedding_function=SkillbankEmbeddingFunction(self._embedder),  # type: ignore[arg-type]
            )

    def _marked(self) -> None:
        """This instance wrote: give its marker a new token (after the write, so a reader sees the write first)."""
        if self._marks is not None:
            self._marks.upsert(
                ids=[self.writer], embeddings=[[1.0]], metadatas=[{"token": uuid.uuid4().hex, "ts": time.time()}]
            )

    @_reaching
    def revisions(self) -> dict[str, str]:
        """The other writers' marker tokens on a shared server (one small read); `{}` for an embedded store."""
        if self._marks is None:
            return {}
        res = self._marks.get(include=["metadatas"])
        return {
            i: str(m.get("token", ""))
            for i, m in zip(res["ids"], res["metadatas"] or [], strict=True)
            if i != self.writer
        }

    @_reaching
    def marked(self) -> bool:
        return self._marks is not None and self._marks.count() > 0

    def reopen(self) -> None:
        """Drop this process's cached view (its in-memory vector index) and read the store afresh.

        An embedded store written by another process is only visible after this.
        """
        if self._path is not None:
            self.close()
            self._connect()

    def close(self) -> None:
        """Release the client (its database handles or HTTP connections)."""
        admin = getattr(self._client, "_admin_client", None)
        servers = [getattr(self._client, "_server", None), getattr(admin, "_server", None)]
        self._client.close()  # type: ignore[attr-defined]  # on Client, not on the ClientAPI protocol
        if self._url is not None:
            # chromadb 1.5's HTTP clients keep their connection pools open after close(); close them ourselves.
            for server in servers:
                session = getattr(server, "_session", None)
                if session is not None and hasattr(session, "close"):
                    session.close()

    @_reaching
    def recreate(self) -> None:
        """Drop the collection and create it empty (to change the embedding dimension)."""
        self._client.delete_collection(self._name)
        self._connect()
        self._marked()

    @_reaching
    def upsert(self, skills: Sequence[Skill], embeddings: np.ndarray) -> None:
        if not skills:
            return
        batch, now = 1000, time.time_ns()
        for start in range(0, len(skills), batch):
            part = skills[start : start + batch]
            self._col.upsert(
                ids=[s.skill_id for s in part],
                embeddings=np.asarray(embeddings[start : start + batch], dtype=np.float32),
                documents=[s.document() for s in part],
                metadatas=[skill_metadata(s, now) for s in part],
            )
        self._marked()

    @_reaching
    def update_metadata(self, skills: Sequence[Skill]) -> None:
        """Rewrite the stored JSON (counters, confidence) of existing skills without touching their vectors."""
        if skills:
            now = time.time_ns()
            self._col.update(ids=[s.skill_id for s in skills], metadatas=[skill_metadata(s, now) for s in skills])
            self._marked()

    @_reaching
    def delete(self, skill_ids: Sequence[str]) -> None:
        if skill_ids:
            self._col.delete(ids=list(skill_ids))
            self._marked()

    @_reaching
    def get(self, skill_ids: Sequence[str]) -> list[Skill]:
        if not skill_ids:
            return []
        res = self._col.get(ids=list(skill_ids), include=["metadatas"])
        found = {
            i: Skill.model_validate_json(str(m["skill"]))
            for i, m in zip(res["ids"], res["metadatas"] or [], strict=True)
        }
        return [found[i] for i in skill_ids if i in found]

    @_reaching
    def ids(self, batch_size: int = 5000) -> list[str]:
        """Every stored skill id (no documents, no vectors)."""
        out: list[str] = []
        while True:
            got = self._col.get(include=[], limit=batch_size, offset=len(out))["ids"]
            out += got
            if len(got) < batch_size:
                return out

    def written_since(self, written_ns: int, batch_size: int = 1000) -> list[tuple[Skill, np.ndarray]]:
        """Every skill (with its vector) written at or after `written_ns` (wall clock, ns)."""
        return self.iter_all(batch_size, where={"written_ns": {"$gte": written_ns}})

    @_reaching
    def iter_all(self, batch_size: int = 1000, where: dict | None = None) -> list[tuple[Skill, np.ndarray]]:
        out: list[tuple[Skill, np.ndarray]] = []
        offset = 0
        while True:
            res = self._col.get(include=["metadatas", "embeddings"], where=where, limit=batch_size, offset=offset)
            ids = res["ids"]
            if not ids:
                break
            embs = res["embeddings"]
            for meta, emb in zip(res["metadatas"] or [], embs if embs is not None else [], strict=True):
                out.append((Skill.model_validate_json(str(meta["skill"])), np.asarray(emb, dtype=np.float32)))
            offset += len(ids)
        return out

    @_reaching
    def query(self, embedding: np.ndarray, n: int, where: dict | None = None) -> list[tuple[str, float]]:
        """The `n` nearest ids with their cosine similarity; the caller keeps `n` within `count()`."""
        if n <= 0:
            return []
        res = self._col.query(
            query_embeddings=np.asarray(embedding, dtype=np.float32).reshape(1, -1),
            n_results=n,
            where=where,
            include=["distances"],
        )
        ids = res["ids"][0]
        dists = (res["distances"] or [[]])[0]
        return [(i, 1.0 - float(d)) for i, d in zip(ids, dists, strict=True)]

    @_reaching
    def count(self) -> int:
        return int(self._col.count())
