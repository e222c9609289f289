"""The syntax worker's own side (`python -I -S -c ... serve`): the standard library and `sandbox.syntax` only, so it
starts in milliseconds and holds little memory. The engine's side and the protocol: `sandbox.syntax_worker`."""

from __future__ import annotations

import contextlib
import marshal
import os
import struct

from sandbox.syntax import syntax_error, text_syntax_error
from sandbox.undumpable import make_undumpable

Error = tuple[int | None, str] | None
TICKET = struct.Struct("<qq")  # (offset, length) of a job in the shared file; offset -1 ends the batch
END = TICKET.pack(-1, 0)
SIZE = struct.Struct("<I")  # the length of an answer that follows
_BOM = b"\xef\xbb\xbf"


def read_exact(fd: int, size: int) -> bytes | None:
    """`size` bytes from a pipe; None at its end (the other side left). Read in pieces of at most 1 MB, so a garbled
    length never asks for one huge buffer. The workers' frames are read with it (this one's, the redaction
    worker's)."""
    chunks: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    """All of `data` to a pipe (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def lines_text(source: bytes) -> str:
    """A file's lines as `sandbox.patch.textfile` splits them, each after a newline (`"\\n" + "\\n".join(lines)`),
    for bytes without CR (LF endings only): the text `text_syntax_error` reads, made without splitting the lines."""
    data = source[len(_BOM) :] if source.startswith(_BOM) else source
    text = data.decode("utf-8", "surrogateescape")
    return "\n" + (text[:-1] if text.endswith("\n") else text)


def check(source: bytes, joined: str | None, changed: list[tuple[int, int]] | None, filename: str) -> Error:
    """`sandbox.syntax.file_syntax_error` of a job: its lines are `joined` (joined by newlines) when the engine
    sent them (a file with CR), else those of `source`."""
    if changed is None:
        return syntax_error(source, filename)
    return text_syntax_error(source, lines_text(source) if joined is None else "\n" + joined, changed, filename)


def background() -> None:
    """Run as a batch task (Linux `SCHED_BATCH`: the same share of the CPU, but a wake-up does not preempt).

    The server wakes this worker with every job it sends; as an ordinary task the worker would take the core the
    server is running on at once, and the server would wait for its own helper. Measured through MCP on the 8
    release diffs (6 alternating runs, load 3-4): 129.4-138.4 -> 123.1-130.3 ms with this and the redaction
    worker run so."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux: an ordinary task
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))


def serve(go: str, tickets: str, answers: str, data: str) -> None:
    """The worker's loop: per batch (a byte on `go`), a job per ticket until an end ticket, then the errors found.

    Between batches it reads `go`, never the tickets, so the second end ticket is left for the engine. It leaves
    when a pipe closes: the server has gone."""
    make_undumpable()  # the patches it is sent are not for a test's eyes (see `sandbox.undumpable`)
    go_fd, tickets_fd, answers_fd, data_fd = int(go), int(tickets), int(answers), int(data)
    background()
    os.write(answers_fd, b"R")
    while read_exact(go_fd, 1) is not None:
        done: list[tuple[int, Error]] = []
        while (ticket := read_exact(tickets_fd, TICKET.size)) is not None:
            offset, length = TICKET.unpack(ticket)
            if offset < 0:
                break
            number, filename, source, joined, changed = marshal.loads(os.pread(data_fd, length, offset))
            done.append((number, check(source, joined, changed, filename)))
        else:
            return
        payload = marshal.dumps(done)
        write_all(answers_fd, SIZE.pack(len(payload)) + payload)
