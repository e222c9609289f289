"""The in-process embedder a settings string names (`minilm`, `sentence-transformers:<model>`, `hash[:dim]`).

Shared by `make_embedder` and the worker process, which builds the same embedder on its side of the pipe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skills_store.errors import ConfigError

if TYPE_CHECKING:  # the protocol module imports the pydantic models, which the worker process never needs
    from skills_store.protocols import Embedder


#: The packaged MiniLM's specs and the runtime each runs it with (`minilm`: onnxruntime with 8-bit weights when it
#: imports, else torch). One model, one vector space: `minilm:onnxruntime` and `minilm:torch` give the same vectors
#: (to 1e-5), `minilm:int8` vectors at cosine ~0.99 of them, so a store written with one is read with the
#: others (`skills reindex --reembed` makes its vectors the current runtime's).
MINILM_SPECS = {"minilm": "auto", "minilm:int8": "int8", "minilm:onnxruntime": "onnxruntime", "minilm:torch": "torch"}


def build_inner(spec: str) -> Embedder:
    """The embedder `spec` names, in this process, without a cache."""
    if spec in MINILM_SPECS:
        from skills_store.embedders.minilm import MiniLMEmbedder

        return MiniLMEmbedder(runtime=MINILM_SPECS[spec])
    if spec.startswith("sentence-transformers:"):
        from skills_store.embedders.st import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(spec.split(":", 1)[1])
    if spec == "hash" or spec.startswith("hash:"):
        from skills_store.embedders.hashing import HashEmbedder

        try:
            dim = int(spec.split(":", 1)[1]) if ":" in spec else 384
        except ValueError:
            raise ConfigError(f"bad embedder {spec!r}: the hash dimension must be an integer (hash:384)") from None
        return HashEmbedder(dim=dim)
    raise ConfigError(
        f"unknown embedder {spec!r}: use 'minilm' ('minilm:int8', 'minilm:onnxruntime', 'minilm:torch'), "
        "'sentence-transformers:<model name or path>' or 'hash'"
    )
