"""Any sentence-transformers model by name or local path (`SKILLBANK_EMBEDDER=sentence-transformers:<model>`).

Loads with the `sentence_transformers` package itself, so every model it supports works. Models are never
downloaded by skillbank: give a local path, or a name already in the Hugging Face cache.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from skills_store.embedders.bert import tokenizable
from skills_store.errors import ConfigError


class SentenceTransformerEmbedder:
    def __init__(self, model: str, *, batch_size: int = 64) -> None:
        from sentence_transformers import SentenceTransformer

        try:
            self._model = SentenceTransformer(model, device="cpu", local_files_only=True)
        except Exception as exc:
            raise ConfigError(f"cannot load sentence-transformers model {model!r} offline: {exc}") from exc
        self.name = model
        dim = self._model.get_embedding_dimension()
        if dim is None:
            raise ConfigError(f"sentence-transformers model {model!r} does not report its embedding dimension")
        self.dim = int(dim)
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            vectors = self._model.encode(
                tokenizable(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
            )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)
