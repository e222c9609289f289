"""stdio without a thread per message: the wire read and written from the event loop.

The SDK's `stdio_server` wraps stdin and stdout in `anyio.wrap_file`, so every line read, every write and every
flush is a hop to a worker thread and back: three per tool call, ~0.12 ms each on a quiet 2-core machine (more
under load, where each hop waits for a core), a third of what a bare stdio tool costs. Here the read end is
non-blocking and waited on with the event loop's poller, and a reply is written straight to the pipe once the
poller says it has room (a write larger than the room left blocks only until the client reads, as a thread's would).

Only pipes and sockets take this path (`usable`); a terminal or a file keeps the SDK's own streams, so a
non-blocking flag never leaks to a shell. As the SDK does, while serving fd 0 reads the null device and fd 1
writes to stderr, so a stray `print` or a child's output never lands on the wire; both are restored on exit.

A lone surrogate escape (`"\\ud800"`, valid JSON) is taken as its text (`\\ud800`, as the capture stores it):
the SDK's parser refuses such a line, and with no id read it answers nothing, so the client would wait forever.
For the same reason a line the SDK's parser refuses is answered here (`parse_line`) with the JSON-RPC error it calls
for, with the request's id when one can be read from it, instead of silence: not JSON (parse error), not a JSON-RPC
message (invalid request), a request whose params are not an object (invalid params), or nested deeper than that
parser goes (~200 levels: a step's `args` holding a deep structure).
"""

from __future__ import annotations

import codecs
import json
import os
import re
import select
import signal
import stat
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from mcp_server.errors import json_safe

#: The most read from the pipe at once (a 10 MB patch arrives in a few reads).
CHUNK = 1 << 20
#: A JSON escape of a UTF-16 surrogate: a lone one is refused by the SDK's (Rust) parser.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def without_lone_surrogates(line: str) -> str:
    """`line` (one JSON-RPC message) with each lone surrogate escape made its text, so that it parses; a line
    without one (a surrogate pair is a character, kept) is returned as it is."""
    if "\\u" not in line or not _has_surrogate_escape(line):
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line  # not JSON: the SDK reports it as it would have
    safe = json_safe(message)
    return line if safe == message else json.dumps(safe, ensure_ascii=False) + "\n"


def _has_surrogate_escape(line: str) -> bool:
    """Whether `line` holds a surrogate escape: `\\udXXX` after an even run of backslashes (none, or escaped ones).
    After an odd run it is text, as in a patch to code that writes `"\\udcff"`: such a line is not parsed twice
    (a release diff of click's: 1.2 ms)."""
    for found in _SURROGATE_ESCAPE.finditer(line):
        start = stop = found.start()
        while start and line[start - 1] == "\\":
            start -= 1
        if (stop - start) % 2 == 0:
            return True
    return False


def usable(fd: int) -> bool:
    """A pipe or a socket: something the event loop's poller can wait on."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class LineReader:
    """`async for line in reader`: the lines of a non-blocking descriptor, decoded as UTF-8 (bad bytes replaced)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()
        self._scanned = 0
        self._eof = False
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                self._scanned = 0
                return without_lone_surrogates(self._decode(line))
            self._scanned = len(self._buffer)
            if self._eof:
                if not self._buffer:
                    raise StopAsyncIteration
                rest = bytes(self._buffer)
                self._buffer.clear()
                return without_lone_surrogates(self._decode(rest, final=True))
            try:
                chunk = os.read(self.fd, CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True


class PipeWriter:
    """`await writer.write(text)`: written from the event loop, waiting for room in the pipe first."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            _, ready, _ = select.select([], [self.fd], [], 0)
            if not ready:
                await anyio.wait_writable(self.fd)
            data = data[os.write(self.fd, data) :]

    async def flush(self) -> None:
        """Nothing is buffered."""


@contextmanager
def claimed(read_fd: int = 0, write_fd: int = 1) -> Iterator[tuple[int, int]]:
    """Private duplicates of the wire (the read one non-blocking); meanwhile `read_fd` reads the null device and
    `write_fd` writes to stderr."""
    wire_in, wire_out = os.dup(read_fd), os.dup(write_fd)
    flags = os.get_blocking(wire_in)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, read_fd)
        os.close(null)
        os.dup2(2, write_fd)
        os.set_blocking(wire_in, False)
        yield wire_in, wire_out
    finally:
        os.set_blocking(wire_in, flags)
        os.dup2(wire_in, read_fd)
        os.dup2(wire_out, write_fd)
        os.close(wire_in)
        os.close(wire_out)


async def serve(server: MCPServer) -> None:
    """Serve `server` over this process's stdin and stdout until the client closes stdin, or SIGTERM comes.

    SIGTERM (how clients and process managers stop a server) ends the session the way a closed stdin does: calls
    in flight are cancelled (a test run is killed) and the session's trajectory is closed, where the default
    handler would kill the process and leave it open until `close-stale`."""
    async with anyio.create_task_group() as group:
        group.start_soon(_leave_on_sigterm, group.cancel_scope)
        await _serve(server)
        group.cancel_scope.cancel()


async def _leave_on_sigterm(scope: anyio.CancelScope) -> None:
    try:
        receiver = anyio.open_signal_receiver(signal.SIGTERM)
    except (NotImplementedError, RuntimeError, ValueError):  # no signals here (a thread, another platform)
        return
    with receiver as signals:
        async for _ in signals:
            scope.cancel()
            return


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_ID_VALUE = re.compile(r'\s*:\s*(-?\d+(?![.eE\d])|"(?:[^"\\]|\\.)*")')


@dataclass
class Unreadable:
    """A line that holds no JSON-RPC message the server can take, and the error that answers it."""

    reply: types.JSONRPCError


def parse_line(line: str) -> types.JSONRPCMessage | Unreadable:
    """One line of the wire as the message it holds, as the SDK reads it; when it holds none (not JSON, not a
    JSON-RPC message, or nested deeper than the SDK's parser goes, ~200 levels), the error to answer it with."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        problem = exc.errors()[0]
    else:
        # A request whose id is no string or integer (`null`, `true`, `1.5`, an object) reads as a notification,
        # which nothing answers: its client would wait forever. It is an invalid request (answered with id null).
        if isinstance(message, types.JSONRPCNotification) and '"id"' in line:
            raw = json.loads(line)
            if isinstance(raw, dict) and "id" in raw:
                reason = f"its id {json.dumps(raw['id'])[:40]} is not a string or an integer"
                return _error(types.INVALID_REQUEST, f"Invalid Request: {reason}", None)
        return message
    text = str(problem.get("msg", ""))
    if problem["type"] == "json_invalid":
        if "recursion limit" in text:
            reason = "the message is nested too deeply (JSON-RPC messages are read to about 200 levels)"
            return _error(types.INVALID_REQUEST, reason, _id_of(line))
        return _error(types.PARSE_ERROR, f"Parse error: the line is not JSON ({text})", _id_of(line))
    message = json.loads(line)  # valid JSON within the depth the SDK's parser read
    request_id = _request_id(message)
    if isinstance(message, dict) and "method" in message and "params" in message and request_id is not None:
        where = ".".join(str(part) for part in problem.get("loc", ()))
        return _error(types.INVALID_PARAMS, f"Invalid params: {where}: {text}", request_id)
    return _error(types.INVALID_REQUEST, f"Invalid Request: not a JSON-RPC 2.0 message ({text})", request_id)


def _error(code: int, message: str, request_id: int | str | None) -> Unreadable:
    error = types.ErrorData(code=code, message=message)
    return Unreadable(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _request_id(message: object) -> int | str | None:
    if not isinstance(message, dict):
        return None
    value = message.get("id")
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _id_of(line: str) -> int | str | None:
    """The `id` of a message that could not be parsed: the value of an `"id"` key at its top level, found by its
    tokens (the start of a cut-off message holds it too); None when there is none."""
    depth = 0
    for token in _TOKEN.finditer(line):
        text = token.group()
        if text in "{[":
            depth += 1
        elif text in "}]":
            depth -= 1
        elif depth == 1 and text == '"id"':
            value = _ID_VALUE.match(line, token.end())
            if value is None:
                return None
            raw = value.group(1)
            try:
                return json.loads(raw) if raw.startswith('"') else int(raw)
            except ValueError:
                return None
    return None


async def _serve(server: MCPServer) -> None:
    if not (usable(0) and usable(1)):
        await server.run_stdio_async()
        return
    lowlevel = server._lowlevel_server  # what `MCPServer.run_stdio_async` runs, with our streams
    with claimed() as (wire_in, wire_out):
        async with _wire(LineReader(wire_in), PipeWriter(wire_out)) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())  # type: ignore[arg-type]


@asynccontextmanager
async def _wire(reader: LineReader, writer: PipeWriter) -> AsyncIterator[tuple[Any, Any]]:
    """The server's message streams over the wire, as the SDK's `stdio_server` makes them from explicit streams,
    but a line that holds no message is answered here (see the module doc) rather than passed on as an exception,
    which the server only logs."""
    read_send, read = create_context_streams[SessionMessage | Exception](0)
    write, write_receive = create_context_streams[SessionMessage](0)

    async def from_client() -> None:
        try:
            async with read_send:
                async for line in reader:
                    if not line.strip():  # a blank line between messages: nothing to answer
                        continue
                    message = parse_line(line)
                    if isinstance(message, Unreadable):  # answered in turn with the server's own answers
                        await write.send(SessionMessage(message.reply))
                    else:
                        await read_send.send(SessionMessage(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the server has stopped reading
            await anyio.lowlevel.checkpoint()

    async def to_client() -> None:
        try:
            async with write_receive:
                async for session_message in write_receive:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await writer.write(text + "\n")
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(from_client)
        group.start_soon(to_client)
        yield read, write
