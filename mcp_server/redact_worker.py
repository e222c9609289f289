"""Redacting a call's long arguments on the second core while the tool runs.

The capture redacts what it keeps of every argument before the step is committed, on the response path: for an
`apply_patch` of a release diff that is ~28k characters of regex scans (~1.3 ms a call, 10 ms for the 8 bench
diffs), after the engine is done. The arguments are known when the call starts, so their windows (see
`capture_text.windows_of`) go to this worker process then, and it redacts them while the engine plans and writes;
the capture takes its answer at the end. `Redactor` holds the interpreter lock for every scan, so a thread would
only take turns with the engine; a process runs beside it.

The worker answers exactly what `Redactor.redact` answers in-process (it builds the same redactor from the same
patterns), and whenever it cannot answer in time (not started yet, busy with another call, dead, hung, or the
value too big for its pipe) the capture redacts in-process as before: nothing is ever stored unredacted. It is
plain Python (`-I -S`, `skills_store.redact` only; the server's environment without its secrets, and undumpable:
a test of the same uid cannot read it or the text before redaction out of /proc), spawned by the first call worth
it, and it leaves when its stdin closes, so it dies with the server. A request is written from the event loop only
into an empty pipe that holds it whole, so the write never waits for the worker, even a hung one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import marshal
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from mcp_server.redact_worker_main import SIZE
from sandbox.syntax_worker_main import read_exact, write_all
from sandbox.worker_env import worker_env
from skills_store.redact import Redactor

#: Arguments with less text than this are redacted in-process: the round trip costs more than the scan.
MIN_CHARS = 8_000
#: How long the capture waits for an answer before it redacts in-process (and the worker is replaced).
ANSWER_TIMEOUT_S = 2.0
#: The request pipe is grown to this (Linux), and a request must fit in what it really holds: written to the empty
#: pipe (no request is ever outstanding when one is sent), it then never blocks the event loop.
PIPE_BYTES = 1 << 20
#: What a pipe is assumed to hold where its size cannot be read.
_SMALL_PIPE = 16 << 10
_ROOT = Path(__file__).resolve().parents[1]
_MAIN = "import sys; sys.path.insert(0, sys.argv[1]); import mcp_server.redact_worker_main as m; m.serve(sys.argv[2])"
_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)


class Pending:
    """One request's answer, filled in by the worker's reader thread."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self.value: Any = None
        self.ok = False
        self.sent = time.monotonic()

    def done(self) -> bool:
        return self._done.is_set()

    def _set(self, ok: bool, value: Any) -> None:
        self.ok, self.value = ok, value
        self._done.set()

    def result(self, timeout_s: float) -> tuple[bool, Any]:
        """(True, the redacted value), or (False, None) when it is not there within `timeout_s` or failed."""
        if not self._done.wait(timeout_s):
            return False, None
        return (True, self.value) if self.ok else (False, None)


class RedactWorker:
    """`submit(value)` while a call runs; `Pending.result` at its end. One request at a time: a call that finds the
    worker busy redacts in-process."""

    def __init__(self, redactor: Redactor, *, min_chars: int = MIN_CHARS) -> None:
        if redactor.spec is None:
            raise ValueError("a redactor with custom rules cannot be rebuilt in a worker")
        self._spec = json.dumps(list(redactor.spec))
        self.min_chars = min_chars
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready = threading.Event()
        """Set by the current worker's first answer; a new one with each worker."""
        self._pending: Pending | None = None
        self._capacity = 0
        """How many bytes the current worker's request pipe holds."""
        self._finalizer = weakref.finalize(self, _stop, [None])
        self.answered = 0
        """Requests the worker answered (for tests and benchmarks)."""

    def submit(self, value: Any, chars: int) -> Pending | None:
        """Send `value` (holding `chars` characters of text) to be redacted; None when it is done in-process."""
        if chars < self.min_chars:
            return None
        try:
            payload = marshal.dumps(value)
        except ValueError:  # not a plain JSON-like value
            return None
        if len(payload) + SIZE.size > PIPE_BYTES // 2:
            return None
        with self._lock:
            if self._pending is not None and not self._pending.done():
                if time.monotonic() - self._pending.sent > ANSWER_TIMEOUT_S:
                    # Hung on an earlier request that nobody waited for (a step committed from the event loop
                    # takes the answer only if it is there): replaced, from the next call on.
                    self._kill_locked()
                return None  # busy with another call's arguments
            proc = self._running()
            if proc is None or proc.stdin is None or not self._ready.is_set():
                return None  # just spawned: this call is redacted in-process while the worker starts
            if len(payload) + SIZE.size > self._capacity:
                return None  # it would wait for the worker to read it (a pipe that could not be grown)
            pending = Pending()
            self._pending = pending
            try:
                write_all(proc.stdin.fileno(), SIZE.pack(len(payload)) + payload)
            except OSError:
                self._kill_locked()
                return None
            return pending

    def abandon(self, pending: Pending) -> None:
        """The caller waited `ANSWER_TIMEOUT_S` for `pending` in vain: the worker is replaced at the next call."""
        with self._lock:
            if self._pending is pending and not pending.done():
                self._kill_locked()

    def wait_ready(self, timeout_s: float) -> bool:
        """Start the worker unless it runs and wait until it takes requests (a test's or a benchmark's warm-up:
        `submit` never waits)."""
        with self._lock:
            self._running()
            event = self._ready
        return event.wait(timeout_s)

    def close(self) -> None:
        with self._lock:
            self._kill_locked()

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._kill_locked()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _MAIN, str(_ROOT), self._spec],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
                env=worker_env(),  # the server's keys and tokens stay out of its /proc/PID/environ
            )  # fmt: skip
        except OSError:
            return None
        assert proc.stdin is not None
        assert proc.stdout is not None
        with contextlib.suppress(OSError):  # a smaller pipe only means fewer values are sent
            fcntl.fcntl(proc.stdin.fileno(), _SETPIPE_SZ, PIPE_BYTES)
        try:
            self._capacity = fcntl.fcntl(proc.stdin.fileno(), _GETPIPE_SZ)
        except OSError:
            self._capacity = _SMALL_PIPE
        self._proc = proc
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _stop, [proc])
        threading.Thread(target=self._read_answers, args=(proc,), name="redact-worker", daemon=True).start()
        return proc

    def _read_answers(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        try:
            self._answers(proc, proc.stdout.fileno())
        finally:
            proc.stdout.close()  # this thread's to close: it is the one reading it

    def _answers(self, proc: subprocess.Popen[bytes], fd: int) -> None:
        first = True
        while (head := read_exact(fd, SIZE.size)) is not None:
            payload = read_exact(fd, SIZE.unpack(head)[0])
            if payload is None:
                break
            ok, value = marshal.loads(payload)
            with self._lock:
                if self._proc is not proc:  # replaced meanwhile: this answer is nobody's
                    return
                if first:
                    first = False
                    self._ready.set()
                    continue
                pending, self._pending = self._pending, None
                if ok:
                    self.answered += 1
            if pending is not None:
                pending._set(ok, value)
        with self._lock:  # the worker is gone: reaped now, so the next call spawns another (whoever waits redacts
            if self._proc is proc:  # in-process), not only once `poll()` has seen the exit
                self._kill_locked()

    def _kill_locked(self) -> None:
        proc, self._proc, self._ready = self._proc, None, threading.Event()
        if proc is not None:
            _stop([proc])
        pending, self._pending = self._pending, None
        if pending is not None:
            pending._set(False, None)


def _stop(holder: list[subprocess.Popen[bytes] | None]) -> None:
    proc = holder[0]
    if proc is None:
        return
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)
