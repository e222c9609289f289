"""Embedders: the packaged all-MiniLM-L6-v2 (default), any sentence-transformers model, and a hash embedder
for tests. `make_embedder(spec)` builds one from a settings string; heavy libraries load only when it is called.
"""

from __future__ import annotations

from skills_store.embedders.cache import CachedEmbedder
from skills_store.errors import ConfigError
from skills_store.protocols import Embedder

__all__ = ["CachedEmbedder", "make_embedder"]


def make_embedder(spec: str = "minilm", *, cache_size: int = 2048) -> Embedder:
    """`minilm`, `sentence-transformers:<name or path>` or `hash[:<dim>]`, wrapped in a query cache."""
    inner: Embedder
    if spec == "minilm":
        from skills_store.embedders.minilm import MiniLMEmbedder

        inner = MiniLMEmbedder()
    elif spec.startswith("sentence-transformers:"):
        from skills_store.embedders.st import SentenceTransformerEmbedder

        inner = SentenceTransformerEmbedder(spec.split(":", 1)[1])
    elif spec == "hash" or spec.startswith("hash:"):
        from skills_store.embedders.hashing import HashEmbedder

        dim = int(spec.split(":", 1)[1]) if ":" in spec else 384
        inner = HashEmbedder(dim=dim)
    else:
        raise ConfigError(
            f"unknown embedder {spec!r}: use 'minilm', 'sentence-transformers:<model name or path>' or 'hash'"
        )
    return CachedEmbedder(inner, maxsize=cache_size)
