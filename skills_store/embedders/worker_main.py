"""The embedder worker process: `python -m skills_store.embedders.worker_main SPEC`.

It loads the model `SPEC` names and answers embedding requests on its stdin/stdout, one at a time, in
length-prefixed frames (the format is below; `worker.WorkerEmbedder` is the other end). It lives exactly as
long as its parent holds the pipe: a reader thread takes the requests, and end of file on stdin (the parent
exited, was killed, or closed it) ends the process at once, even in the middle of loading torch or encoding a
batch. So the worker is never an orphan that outlives its server; its parent (or init, after the parent died)
reaps it.

Frames: a 4-byte big-endian length, then the payload. Requests are the texts as a JSON list. Answers start
with one byte: `R` (ready, JSON `{"name", "dim"}`, sent once the model has loaded), `V` (vectors: uint32
rows, uint32 dim, then rows x dim float32, all little-endian) or `E` (an error, UTF-8 text; after a failed load
the worker exits).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import queue
import struct
import sys
import threading
from typing import IO

from sandbox.undumpable import make_undumpable

#: A batch of at least this many texts is followed by a heap trim (queries, one text each, are not).
TRIM_AFTER_ROWS = 16
_LEN = struct.Struct(">I")
_SHAPE = struct.Struct("<II")


def write_frame(out: IO[bytes], payload: bytes) -> None:
    out.write(_LEN.pack(len(payload)) + payload)
    out.flush()


def read_frame(src: IO[bytes]) -> bytes | None:
    """One frame, or None at end of file (a frame cut short counts as end of file)."""
    head = _read_exact(src, _LEN.size)
    if head is None:
        return None
    return _read_exact(src, _LEN.unpack(head)[0])


def _read_exact(src: IO[bytes], n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = src.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_requests(src: IO[bytes], requests: queue.Queue[list[str]]) -> None:
    while (frame := read_frame(src)) is not None:
        requests.put(json.loads(frame))
    os._exit(0)  # the parent is gone: leave now, whatever the main thread is doing


def _trim() -> None:
    """Give freed heap back to the OS (glibc): loading and large batches leave megabytes of it behind."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def main(argv: list[str]) -> int:
    make_undumpable()  # what it is sent and its memory are not for a test's eyes (see `sandbox.undumpable`)
    if len(argv) != 1:
        print("usage: python -m skills_store.embedders.worker_main SPEC", file=sys.stderr)
        return 2
    # Frames own fd 1: anything a library prints goes to stderr instead of into the protocol.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests: queue.Queue[list[str]] = queue.Queue()
    threading.Thread(target=_read_requests, args=(sys.stdin.buffer, requests), daemon=True).start()
    from skills_store.embedders.specs import build_inner

    try:
        embedder = build_inner(argv[0])
    except Exception as exc:
        write_frame(out, b"E" + f"{type(exc).__name__}: {exc}".encode())
        return 1
    _trim()
    write_frame(out, b"R" + json.dumps({"name": embedder.name, "dim": embedder.dim}).encode())
    while True:
        texts = requests.get()
        try:
            vectors = embedder.embed(texts)
        except Exception as exc:
            write_frame(out, b"E" + f"{type(exc).__name__}: {exc}".encode())
            continue
        rows, dim = vectors.shape
        write_frame(out, b"V" + _SHAPE.pack(rows, dim) + vectors.astype("<f4", copy=False).tobytes())
        if rows >= TRIM_AFTER_ROWS:
            _trim()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
