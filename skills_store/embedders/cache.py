"""An LRU cache of embeddings in front of any embedder: agents repeat the same error text often."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np

if TYPE_CHECKING:  # the protocol module imports the pydantic models, which the worker process never needs
    from skills_store.protocols import Embedder


T = TypeVar("T")


class CachedEmbedder:
    """Caches single-text embeddings (queries); batches of documents pass through and fill the cache."""

    def __init__(self, inner: Embedder, maxsize: int = 2048) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._maxsize = maxsize
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def close(self) -> None:
        """Release the inner embedder's resources (an embedder worker process) when it has any."""
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def prefetch(self, text: str) -> bool:
        """Start encoding `text` ahead of its `embed` when it is not cached and the inner embedder can (an embedder
        worker: `WorkerEmbedder.prefetch`); never waits. Whether anything was sent."""
        prefetch = getattr(self.inner, "prefetch", None)
        if prefetch is None:
            return False
        with self._lock:
            if text in self._cache:
                return False
        return bool(prefetch(text))

    def warm(self, texts: Sequence[str]) -> None:
        """Encode those of `texts` not cached yet as one batch, and keep them: queries about to be searched one by
        one (a test run's failure messages) then cost the model one pass."""
        self.embed(texts)

    def embed_during(self, texts: Sequence[str], work: Callable[[], T]) -> tuple[np.ndarray, T]:
        """`embed(texts)` with `work()` run meanwhile: while the inner embedder's worker encodes when it has one
        and the texts are not cached, else after the vectors."""
        during = getattr(self.inner, "embed_during", None)
        with self._lock:
            cached = [self._cache.get(text) for text in texts]
        if during is None or all(vec is not None for vec in cached):
            return self.embed(texts), work()
        fresh, result = during(texts, work)
        with self._lock:
            self.misses += len(texts)
            self._remember(texts, fresh)
        return fresh, result

    def _remember(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Cache each text's (now read-only) vector as the newest entry, dropping the oldest beyond the size."""
        for text, vec in zip(texts, vectors, strict=True):
            vec.setflags(write=False)
            self._cache[text] = vec
            self._cache.move_to_end(text)
            if len(self._cache) > self._maxsize:
                self._cache.popitem(last=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out: list[np.ndarray | None] = []
        missing: list[int] = []
        with self._lock:
            for i, text in enumerate(texts):
                vec = self._cache.get(text)
                if vec is None:
                    missing.append(i)
                    out.append(None)
                else:
                    self._cache.move_to_end(text)
                    out.append(vec)
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])
            with self._lock:
                self._remember([texts[i] for i in missing], fresh)
            for row, i in enumerate(missing):
                out[i] = fresh[row]
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(out).astype(np.float32, copy=False)  # type: ignore[arg-type]
