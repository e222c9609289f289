"""apply_patch's syntax check on the second core: a persistent worker process that compiles while the engine plans
and writes.

`compile()` holds the interpreter lock for a whole block, so a thread cannot overlap it with the writes, and a
fork per patch costs more in copy-on-write faults than it saves. This worker is spawned once (plain Python, `-I -S`,
the standard library and `sandbox.syntax` only; the server's environment without its secrets, and undumpable: a
test of the same uid cannot read it or the patches out of /proc), reused for every patch, and leaves when its pipe
closes, so it dies with the server. One batch per patch:

- while the patch is planned, each planned `.py` file becomes a job: its bytes go to a shared, unlinked temp file
  (a write that never blocks) and a 16-byte ticket naming where they lie goes to the ticket pipe;
- the worker (woken by a byte on its `go` pipe) takes tickets one by one and runs `file_syntax_error` on them;
- once the files are written, the engine takes the tickets that are left, one at a time, compiling each before
  the next (a ticket is read whole by one reader, so no job is done twice), reads the worker's answer, and does
  again in-process whatever the worker could not answer (it died or hung): the errors are those an in-process
  check reports, by construction.

Two end tickets close a batch, one for each reader; between batches the worker reads `go`, never the tickets.
When the engine took every job, the worker's (empty) answer is read at the start of the next batch instead.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path

from sandbox.syntax import file_syntax_error
from sandbox.syntax_worker_main import END, SIZE, TICKET, Error, read_exact
from sandbox.worker_env import worker_env

Job = tuple[bytes, Sequence[str], list[tuple[int, int]] | None, str]
"""(bytes, lines, changed line ranges or None, file name): `file_syntax_error`'s arguments."""
#: At most this many jobs per batch go to the worker (the ticket pipe holds 4,096); the rest stay in-process.
MAX_JOBS = 2_000
#: A worker that has not answered a batch this long after the engine finished is given up on (and killed).
ANSWER_TIMEOUT_S = 30.0
#: An answer owed for a batch the worker took no job of needs no compile: one not there after this is given up on.
SETTLE_TIMEOUT_S = 2.0
_KEEP_DATA_BYTES = 16 << 20  # the shared file is emptied after a batch that made it larger
_ROOT = Path(__file__).resolve().parents[1]
_MAIN = "import sys; sys.path.insert(0, sys.argv[1]); import sandbox.syntax_worker_main as m; m.serve(*sys.argv[2:])"


class SyntaxWorker:
    """The server's worker process: started by `start`, used through `batch`, respawned after it died.

    Collected or at interpreter exit it is killed and reaped (a server leaving through `os._exit` skips that: its
    worker sees the pipes close and leaves by itself)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one batch at a time; a second patch meanwhile is checked in-process
        self._process = _Process()
        self._finalizer = weakref.finalize(self, self._process.stop)
        self.answered = 0
        """Jobs the worker process answered so far (the rest were checked in-process)."""

    @property
    def pid(self) -> int | None:
        proc = self._process.proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def start(self) -> None:
        """Spawn the worker unless it runs (it gets ready on the other core meanwhile); never waits for a batch."""
        if self._lock.acquire(blocking=False):
            try:
                self._process.start()
            except OSError:
                self._process.stop()
            finally:
                self._lock.release()

    def wait_ready(self, timeout_s: float) -> bool:
        """Start the worker and wait until it takes batches (a benchmark's or a test's warm-up; `batch` never waits)."""
        with self._lock:
            try:
                self._process.start()
                return self._process.poll_ready(timeout_s)
            except OSError:
                self._process.stop()
                return False

    def batch(self, patch: str) -> Batch | None:
        """A batch for one patch, or None: check it in-process (no `.py` file named, worker busy or gone).

        Even a one-line patch to a long module gains (1.9 vs 2.2 ms, median of 41): the hop costs less than the
        writes it overlaps. A worker spawned for this patch takes its tickets once it is up (the engine takes
        the rest), so the first patch gains too."""
        if ".py" not in patch or not self._lock.acquire(blocking=False):
            return None
        process = self._process
        try:
            process.start()
            process.settle()
            os.write(process.fds["go"], b"G")
            return Batch(self, process.fds)
        except OSError:
            process.stop()
        self._lock.release()
        return None

    def close(self) -> None:
        """Kill the worker and reap it (it holds no state; a compile is not waited for)."""
        with self._lock:
            self._process.stop()


class _Process:
    """The worker process and the engine's ends of its pipes (used with the worker's lock held)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.fds: dict[str, int] = {}
        self.ready = False
        self.owed = 0
        """Empty answers to batches the worker took no job of (a small patch's engine took them all)."""

    def start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return
        self.stop()
        go_r, go_w = os.pipe()
        tickets_r, tickets_w = os.pipe()
        answers_r, answers_w = os.pipe()
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
        data, name = tempfile.mkstemp(prefix="skillbank-syntax-", dir=shm)
        os.unlink(name)  # the two processes share it through their descriptors; nothing is left on disk
        fds = (go_r, tickets_r, answers_w, data)
        self.fds = {"go": go_w, "tickets_r": tickets_r, "tickets_w": tickets_w, "answers": answers_r, "data": data}
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _MAIN, str(_ROOT), *map(str, fds)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=fds,
                env=worker_env(),  # the server's keys and tokens stay out of its /proc/PID/environ
            )
        finally:
            os.close(answers_w)  # the worker holds the only writer: its exit is our EOF
            os.close(go_r)

    def poll_ready(self, timeout_s: float = 0) -> bool:
        if not self.ready and select.select([self.fds["answers"]], [], [], timeout_s)[0]:
            if os.read(self.fds["answers"], 1) != b"R":
                raise OSError("the syntax worker did not start")
            self.ready = True
        return self.ready

    def settle(self) -> None:
        """Read the answers owed by earlier batches (they came while the engine served its caller)."""
        while self.owed:
            if self.answers(0, SETTLE_TIMEOUT_S) is None:
                raise OSError("the syntax worker did not answer")
            self.owed -= 1

    def answers(self, count: int, timeout_s: float) -> dict[int, Error] | None:
        """The worker's answer to a batch (after its ready byte, if that has not been read yet)."""
        try:
            if not self.poll_ready(timeout_s):
                return None
        except OSError:  # it died before it was up
            return None
        return _answers(self.fds["answers"], count, timeout_s)

    def stop(self) -> None:
        self.owed = 0
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = {}
        self.ready = False
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


class Batch:
    """The jobs of one patch. `submit` while planning, `close` once written: every job's error, in-process or not."""

    def __init__(self, worker: SyntaxWorker, fds: dict[str, int]) -> None:
        self._worker = worker
        self._fds = fds
        self._jobs: list[Job] = []
        self._ticketed = 0
        self._offset = 0
        self._at: dict[int, int] = {}  # a ticket's offset -> its job
        self._sealed = False
        self._closed = False

    def submit(self, filename: str, source: bytes, lines: Sequence[str], changed: list[tuple[int, int]] | None) -> int:
        """Queue the check of one file as the patch leaves it; returns the job's number."""
        assert not self._sealed
        self._jobs.append((source, lines, changed, filename))
        number = len(self._jobs) - 1
        if self._ticketed < MAX_JOBS and self._fds:
            # The worker rebuilds the lines from the bytes when it can (no CR, where lines and bytes could differ).
            joined = None if b"\r" not in source else "\n".join(lines)
            payload = marshal.dumps((number, filename, source, joined, changed))
            try:
                os.pwrite(self._fds["data"], payload, self._offset)
                os.write(self._fds["tickets_w"], TICKET.pack(self._offset, len(payload)))
            except OSError:
                self._fds = {}  # the worker is gone: the rest is checked in-process, and it is respawned next time
            else:
                self._at[self._offset] = number
                self._offset += len(payload)
                self._ticketed += 1
        return number

    def seal(self) -> None:
        """No more jobs: the worker may finish once it has taken the last ticket."""
        if not self._sealed and self._fds:
            try:
                os.write(self._fds["tickets_w"], END + END)
            except OSError:
                self._fds = {}
        self._sealed = True

    def close(self, *, wanted: bool = True) -> list[Error]:
        """Every job's error (None where it compiles), in job order; `wanted=False` only ends the batch."""
        if self._closed:
            raise RuntimeError("the batch was closed")
        self.seal()
        self._closed = True
        try:
            errors: dict[int, Error] = {}
            mine = self._take_tickets(errors if wanted else None) if self._fds else set(range(self._ticketed))
            answered: dict[int, Error] | None = {}
            if not self._fds:
                answered = None
            elif len(mine) < self._ticketed:
                answered = self._worker._process.answers(self._ticketed - len(mine), ANSWER_TIMEOUT_S)
            else:  # the worker took nothing: its (empty) answer is read before the next batch, not waited for here
                self._worker._process.owed += 1
            if answered is None:
                self._worker._process.stop()  # dead, hung or garbled: respawned with the next patch
                self._fds = {}  # closed by `stop`: a number reused by another file must never be truncated below
                answered = {}
            errors.update(answered)
            self._worker.answered += len(answered)
            if not wanted:
                return []
            missing = [n for n in range(len(self._jobs)) if n not in errors]
            for number in missing:
                errors[number] = file_syntax_error(*self._jobs[number])
            return [errors[n] for n in range(len(self._jobs))]
        finally:
            if self._offset > _KEEP_DATA_BYTES and self._fds:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fds["data"], 0)
            self._worker._lock.release()

    def _take_tickets(self, errors: dict[int, Error] | None) -> set[int]:
        """The jobs nobody had taken, done by the engine one ticket at a time (so the worker goes on taking its
        share meanwhile) until its end ticket; their errors go to `errors` (None: only take them)."""
        numbers: set[int] = set()
        while True:
            ticket = read_exact(self._fds["tickets_r"], TICKET.size)
            if ticket is None:
                return numbers
            start, _ = TICKET.unpack(ticket)
            if start < 0:
                return numbers
            number = self._at[start]
            numbers.add(number)
            if errors is not None:
                errors[number] = file_syntax_error(*self._jobs[number])


def _answers(fd: int, count: int, timeout_s: float) -> dict[int, Error] | None:
    """The worker's errors for the `count` jobs it took; None when it died, hung or sent something else."""
    if not select.select([fd], [], [], timeout_s)[0]:
        return None
    head = read_exact(fd, SIZE.size)
    body = read_exact(fd, SIZE.unpack(head)[0]) if head is not None else None
    if body is None:
        return None
    try:
        answers = dict(marshal.loads(body))
    except (ValueError, EOFError, TypeError):
        return None
    return answers if len(answers) == count else None
