"""Embedders: the packaged all-MiniLM-L6-v2 (default), any sentence-transformers model, and a hash embedder
for tests. `make_embedder(spec)` builds one from a settings string; heavy libraries load only when it is called.

`make_embedder(spec, isolated=True)` runs a model in a worker process instead (`worker.WorkerEmbedder`): the
server uses that, so torch never loads into the process that answers MCP requests (see worker.py for why).

Importing this package loads nothing but `specs` (the settings check reads `specs.MINILM_SPECS` before the MCP
handshake): the query cache, and numpy with it, load with the first `make_embedder` or `CachedEmbedder`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skills_store.embedders.specs import build_inner

if TYPE_CHECKING:  # the protocol module imports the pydantic models, which the worker process never needs
    from skills_store.embedders.cache import CachedEmbedder
    from skills_store.protocols import Embedder

__all__ = ["CachedEmbedder", "build_inner", "make_embedder"]


def __getattr__(name: str) -> Any:
    if name == "CachedEmbedder":
        from skills_store.embedders.cache import CachedEmbedder

        return CachedEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_embedder(spec: str = "minilm", *, cache_size: int = 2048, isolated: bool = False) -> Embedder:
    """`minilm`, `sentence-transformers:<name or path>` or `hash[:<dim>]`, wrapped in a query cache.

    `isolated=True` loads and runs a model in a worker process (the hash embedder, which needs no model, stays
    in this process).
    """
    from skills_store.embedders.cache import CachedEmbedder

    inner: Embedder
    if isolated and not (spec == "hash" or spec.startswith("hash:")):
        from skills_store.embedders.worker import WorkerEmbedder, check_spec

        check_spec(spec)
        inner = WorkerEmbedder(spec)
    else:
        inner = build_inner(spec)
    return CachedEmbedder(inner, maxsize=cache_size)
