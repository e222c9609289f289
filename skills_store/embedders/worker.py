"""`WorkerEmbedder`: an embedding model that loads and runs in a worker process (`worker_main`).

Why a process: importing a model runtime's C extensions holds the interpreter lock (torch's for up to 0.6 s at a
time on a busy machine; onnxruntime's, the default, less). Loaded in a thread of the MCP server, that stalls every
request being served, and a client that disconnects during the load waits for it before the server can leave. In
a worker the server's interpreter never sees the runtime: the load costs it nothing, exit is `kill`, and an
encode is one pipe round trip (the vectors come back as raw float32 bytes).

The worker is spawned when the embedder is built (so the model loads while the caller opens the rest of the
bank), answers one request at a time, is respawned once if it died, and leaves by itself when the pipe to its
parent closes (see worker_main). `stop_workers()` kills every live worker at once for a process that leaves
with `os._exit`. It gets the server's environment without its keys and tokens (`ENV_NAMES`) and makes itself
undumpable first thing, so a test of the same uid finds neither the secrets nor the texts it encodes in /proc.

`prefetch(text)` sends a query ahead, before its search asks for it: the server calls it as soon as a
`search_skills` request is routed, so the worker encodes while the server validates the arguments, opens the
session's capture and runs the keyword side, and the search that follows takes that answer instead of sending
the text again. A query encode is most of a search's time, so starting it first takes the rest off the path.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import IO, Any, TypeVar

import numpy as np

from sandbox.worker_env import worker_env
from skills_store.embedders.specs import MINILM_SPECS
from skills_store.embedders.worker_main import _SHAPE, read_frame, write_frame
from skills_store.errors import ConfigError, SkillStoreError

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Specs whose name and dimension are known without loading the model (so building the embedder never waits).
#: A `hash` worker (no model; `make_embedder` keeps it in-process) exists for tests of the worker itself.
KNOWN = dict.fromkeys(MINILM_SPECS, ("all-MiniLM-L6-v2", 384))

#: The server's variables the worker gets besides `sandbox.worker_env.BASE_NAMES` (never one that looks like a
#: credential, such as HF_TOKEN): what its Python reads (PYTHON*, a venv's or conda's paths), the
#: thread pools (OMP_NUM_THREADS, which the CLI sets), the allocator, and where the model caches are and whether
#: they may be fetched.
ENV_NAMES = (
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "XDG_CACHE_HOME",
    "SENTENCE_TRANSFORMERS_HOME",
    "TORCH_HOME",
)
ENV_PREFIXES = ("PYTHON", "OMP_", "MKL_", "OPENBLAS_", "KMP_", "MALLOC_", "HF_", "HUGGINGFACE_", "TRANSFORMERS_")
#: Two malloc arenas, not one per thread (torch's and the tokenizer's): a smaller resident set.
ENV_DEFAULTS = {"MALLOC_ARENA_MAX": "2"}

_LIVE: weakref.WeakSet[WorkerEmbedder] = weakref.WeakSet()


def check_spec(spec: str) -> None:
    """Refuse a spec the worker could not load, before spawning anything."""
    if spec not in KNOWN and not spec.startswith(("sentence-transformers:", "hash")):
        raise ConfigError(
            f"unknown embedder {spec!r}: use 'minilm' ('minilm:int8', 'minilm:onnxruntime', 'minilm:torch'), "
            "'sentence-transformers:<model name or path>' or 'hash'"
        )


class EmbedderWorkerError(SkillStoreError):
    """The worker process died or could not load its model."""


class WorkerEmbedder:
    def __init__(self, spec: str) -> None:
        check_spec(spec)
        self.spec = spec
        self._known = KNOWN.get(spec)
        self._meta: tuple[str, int] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._lock = threading.Lock()
        self._closed = False
        self._ahead: bytes | None = None
        """The payload `prefetch` sent whose answer nobody has read yet (the next request reads it first)."""
        self._spare: tuple[bytes, bytes] | None = None
        """(payload, answer) of a text sent ahead whose answer another request had to read first: kept for the
        request that asks for it (two concurrent searches, the second reaching the worker first)."""
        with self._lock:
            self._spawn()
            try:
                if self._known is None:  # only the model can say: wait for it to load
                    self._await_ready()
            except _WorkerGone:
                self.close()
                raise EmbedderWorkerError(f"the embedder worker for {spec!r} died: {self._last_words()}") from None
            except BaseException:
                self.close()
                raise
        _LIVE.add(self)
        self.name, self.dim = self._known or self._meta or ("", 0)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_during(texts, _nothing)[0]

    def embed_during(self, texts: Sequence[str], work: Callable[[], T]) -> tuple[np.ndarray, T]:
        """The texts' vectors, and what `work()` returned: it runs in this thread while the worker encodes (a
        search's keyword side: after an idle gap, when the encode waits on memory more than on the cores, that
        hides the keyword side's ~1-3 ms; back to back it costs ~0.1 ms). `work` runs once, whatever the worker
        does; an exception from it is raised after the worker's answer is read."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32), work()
        payload = json.dumps(list(texts)).encode()
        done: list[tuple[bool, Any]] = []  # (True, what work returned) or (False, what it raised), once

        def run_work() -> None:
            if not done:
                try:
                    done.append((True, work()))
                except BaseException as exc:
                    done.append((False, exc))
                    raise

        with self._lock:
            try:
                vectors = self._request(payload, run_work)
            except _WorkerGone:
                log.warning("embedder worker exited (%s); starting a new one", self._last_words())
                self._spawn()
                try:
                    vectors = self._request(payload, run_work)
                except _WorkerGone:
                    raise EmbedderWorkerError(
                        f"the embedder worker for {self.spec!r} keeps exiting: {self._last_words()}"
                    ) from None
        run_work()  # the request failed before `work` ran (the worker could not take it)
        ok, result = done[0]
        if not ok:  # it raised, and the worker's death then hid that: raise it now
            raise result
        return vectors, result

    def prefetch(self, text: str) -> bool:
        """Send `text` to be encoded now, if the worker is ready and idle; an `embed` of exactly `[text]` then
        takes its answer. Never waits (safe on an event loop): False, nothing sent, when the worker is busy,
        loading, gone, or already holds a text sent ahead."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            proc = self._proc
            if self._ahead is not None or self._meta is None or proc is None or proc.stdin is None:
                return False
            payload = json.dumps([text]).encode()
            try:
                write_frame(proc.stdin, payload)
            except (BrokenPipeError, ValueError):
                return False  # the worker died: the next request respawns it
            self._ahead = payload
            return True
        finally:
            self._lock.release()

    def close(self) -> None:
        """Stop the worker and reap it. It holds no state, so SIGKILL is safe, and prompt even mid-import."""
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is not None:
            _discard(proc)

    def kill(self) -> None:
        """SIGKILL without waiting: for a parent about to `os._exit` (init reaps the worker)."""
        self._closed = True
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    # -- internals (called with the lock held) --

    def _spawn(self) -> None:
        if self._closed:
            raise EmbedderWorkerError("the embedder was closed")
        if self._proc is not None:
            _discard(self._proc)
        self._meta = None
        self._ahead = self._spare = None
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "skills_store.embedders.worker_main", self.spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=worker_env(ENV_NAMES, ENV_PREFIXES, ENV_DEFAULTS),  # the server's keys stay out of its environ
        )
        threading.Thread(
            target=self._drain_stderr, args=(self._proc.stderr,), name="skillbank-embedder-log", daemon=True
        ).start()

    def _await_ready(self) -> None:
        if self._meta is not None:
            return
        frame = self._read()
        if frame[:1] == b"E":
            raise ConfigError(f"the embedder {self.spec!r} could not load: {frame[1:].decode(errors='replace')}")
        if frame[:1] != b"R":
            raise EmbedderWorkerError(f"the embedder worker answered {frame[:1]!r} before it was ready")
        info = json.loads(frame[1:])
        self._meta = (str(info["name"]), int(info["dim"]))
        if self._known and self._meta != self._known:
            raise EmbedderWorkerError(f"the embedder worker loaded {self._meta}, expected {self._known}")

    def _request(self, payload: bytes, meanwhile: Callable[[], None]) -> np.ndarray:
        self._await_ready()
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise _WorkerGone
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead != payload:
            self._spare = (ahead, self._read())  # another search's text sent ahead: its answer kept for it
        spare = self._spare
        if spare is not None and spare[0] == payload:
            self._spare = None
            meanwhile()
            frame = spare[1]
        else:
            if ahead != payload:
                try:
                    write_frame(proc.stdin, payload)
                except (BrokenPipeError, ValueError):
                    raise _WorkerGone from None
            try:
                meanwhile()
            finally:
                frame = self._read()  # read even when `meanwhile` raised: the next request gets its own answer
        kind, body = frame[:1], frame[1:]
        if kind == b"E":
            raise EmbedderWorkerError(f"the embedder failed: {body.decode(errors='replace')}")
        rows, dim = _SHAPE.unpack_from(body)
        vectors = np.frombuffer(body, dtype="<f4", offset=_SHAPE.size).reshape(rows, dim)
        return vectors.astype(np.float32)  # a writable copy in native order

    def _read(self) -> bytes:
        proc = self._proc
        if proc is None or proc.stdout is None:
            raise _WorkerGone
        frame = read_frame(proc.stdout)
        if frame is None:
            proc.wait()
            raise _WorkerGone
        return frame

    def _drain_stderr(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        with stream:
            for raw in stream:
                line = raw.decode(errors="replace").rstrip()
                if line:
                    self._stderr.append(line)
                    log.warning("embedder worker: %s", line)

    def _last_words(self) -> str:
        code = self._proc.returncode if self._proc is not None else None
        tail = " | ".join(list(self._stderr)[-3:])
        return f"exit status {code}" + (f", stderr: {tail}" if tail else "")


class _WorkerGone(Exception):
    pass


def _nothing() -> None:
    return None


def _discard(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):  # stderr is closed by the thread that reads it
        if stream is not None:
            # A write the dead worker never read stays buffered, and closing flushes it: EPIPE, nothing lost.
            with contextlib.suppress(BrokenPipeError):
                stream.close()


def stop_workers() -> None:
    """Kill every live worker of this process without waiting (the caller is about to exit)."""
    for worker in list(_LIVE):
        worker.kill()
