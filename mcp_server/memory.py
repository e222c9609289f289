"""Keeping the long-running server's memory small (glibc malloc tuning; a no-op elsewhere).

Torch, the tokenizer and Chroma allocate from several threads; glibc gives each thread its own 64 MB arena and
returns little of it. Capping the arenas before threads start, and trimming once the model is loaded, keeps
the resident set close to what is really in use.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)
M_ARENA_MAX = -8


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def limit_arenas(count: int = 2) -> None:
    """Cap malloc arenas; call before worker threads start."""
    libc = _libc()
    if libc is not None and not libc.mallopt(M_ARENA_MAX, count):
        log.debug("mallopt(M_ARENA_MAX) was refused")


def trim() -> None:
    """Give freed heap pages back to the OS."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
