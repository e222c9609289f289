"""The stdio wire read and written from the event loop (`mcp_server.stdio`), and a real server over it."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

import mcp_server.stdio as stdio
from mcp_server.stdio import LineReader, PipeWriter, claimed, usable, without_lone_surrogates
from skills_store.trajectories.store import SQLiteTrajectoryStore

pytestmark = pytest.mark.anyio


async def lines_of(chunks: list[bytes]) -> list[str]:
    """What `LineReader` yields for these chunks, each written separately (the reader sees them one by one)."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    received: list[str] = []

    async def feed() -> None:
        for chunk in chunks:
            os.write(write_fd, chunk)
            await anyio.sleep(0.01)
        os.close(write_fd)

    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(feed)
                received = [line async for line in LineReader(read_fd)]
    finally:
        os.close(read_fd)
    return received


async def test_lines_split_across_reads_come_back_whole_with_their_newlines() -> None:
    got = await lines_of([b'{"a": 1}\n{"b":', b" 2}\n", b'{"c": 3}\n'])
    assert got == ['{"a": 1}\n', '{"b": 2}\n', '{"c": 3}\n']


async def test_a_character_split_between_two_reads_is_decoded_once_and_bad_bytes_are_replaced() -> None:
    snowman = "☃".encode()
    got = await lines_of([b'"' + snowman[:1], snowman[1:] + b'"\n', b"\xff\n"])
    assert got == ['"☃"\n', "\ufffd\n"]


async def test_a_lone_surrogate_escape_becomes_its_text_and_anything_else_stays_as_sent() -> None:
    """The SDK's parser refuses a lone `\\ud800` (valid JSON) and, with no id read, answers nothing."""
    lone = '{"id": 7, "q": "KeyError \\ud800 qty", "k": ["\\udce9"]}\n'
    kept = [
        '{"id": 8, "q": "\\ud83c\\udf89 pair"}\n',  # a surrogate pair is one character: the SDK takes it
        '{"id": 9, "q": "a literal \\\\ud800"}\n',  # an escaped backslash, then text
        '{"id": 10, "q": "\\ud800" broken\n',  # not JSON: the SDK's parse error, as before
    ]
    got = await lines_of([(line).encode() for line in [lone, *kept]])
    assert json.loads(got[0]) == {"id": 7, "q": "KeyError \\ud800 qty", "k": ["\\xe9"]}
    assert got[1:] == kept
    assert without_lone_surrogates('{"q": "\\uD800"}') == '{"q": "\\\\ud800"}\n'


def test_a_surrogate_escape_after_an_escaped_backslash_is_text_and_the_line_is_not_parsed(monkeypatch) -> None:
    """A patch to code holding `"\\udcff"` arrives as `\\\\udcff`: text, so the line goes on without a parse."""

    def parsed(_: str) -> None:
        raise AssertionError("parsed")

    text = '{"id": 3, "q": "filename=\\"\\\\udcff\\" and \\\\\\\\uD800"}\n'  # two and four backslashes
    monkeypatch.setattr(stdio.json, "loads", parsed)
    assert without_lone_surrogates(text) is text
    monkeypatch.undo()
    real = '{"id": 4, "q": "\\\\\\ud800 after an escaped backslash"}\n'  # three: one escaped, then a real one
    assert json.loads(without_lone_surrogates(real)) == {"id": 4, "q": "\\\\ud800 after an escaped backslash"}


async def test_a_last_line_without_a_newline_is_still_delivered_and_then_the_reader_ends() -> None:
    assert await lines_of([b"one\ntwo"]) == ["one\n", "two"]
    assert await lines_of([]) == []


async def test_a_reply_bigger_than_the_pipe_arrives_whole_while_the_client_reads_slowly() -> None:
    read_fd, write_fd = os.pipe()
    message = "x" * (3 << 20) + "\n"  # a pipe holds 64 KB
    received = bytearray()

    def client() -> None:
        while chunk := os.read(read_fd, 4096):
            received.extend(chunk)

    reader = threading.Thread(target=client)
    reader.start()
    try:
        with anyio.fail_after(20):
            await PipeWriter(write_fd).write(message)
            await PipeWriter(write_fd).flush()
    finally:
        os.close(write_fd)
        reader.join(10)
        os.close(read_fd)
    assert received.decode() == message


def test_only_pipes_and_sockets_take_the_event_loop_path(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    with (tmp_path / "f").open("w") as plain:
        assert usable(read_fd)
        assert usable(write_fd)
        assert not usable(plain.fileno())
    os.close(read_fd)
    os.close(write_fd)
    assert not usable(write_fd)  # closed


def test_while_claimed_the_standard_fds_read_null_and_write_to_stderr_and_come_back_after(tmp_path: Path) -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    fd_in, fd_out = os.dup(in_r), os.dup(out_w)  # stand-ins for fds 0 and 1
    try:
        with claimed(fd_in, fd_out) as (wire_in, wire_out):
            assert not os.get_blocking(wire_in)
            os.write(in_w, b"for the wire\n")
            assert os.read(fd_in, 100) == b""  # the null device
            assert os.fstat(fd_out).st_ino == os.fstat(2).st_ino  # a stray write goes to stderr
            os.write(wire_out, b"reply\n")
            assert os.read(out_r, 100) == b"reply\n"
        assert os.get_blocking(fd_in)
        assert os.read(fd_in, 100) == b"for the wire\n"  # fd_in is the wire again
        os.write(fd_out, b"after\n")
        assert os.read(out_r, 100) == b"after\n"
    finally:
        for fd in (in_r, in_w, out_r, out_w, fd_in, fd_out):
            os.close(fd)


async def test_a_real_server_answers_every_call_over_pipes_and_serves_a_non_pipe_stdin_the_sdks_way(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    print('output of the test')\n")
    env = {
        **os.environ, "SKILLBANK_HOME": str(tmp_path / "home"), "SKILLBANK_EMBEDDER": "hash",
        "SKILLBANK_TEST_PYTHON": sys.executable, "SKILLBANK_SANDBOX": "local",
    }  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_server", "serve", "--workspace", str(tmp_path)], env=env
    )
    with anyio.fail_after(120):
        async with Client(params) as client:
            for i in range(20):
                found = await client.call_tool("search_skills", {"query": f"KeyError: 'k{i}'", "k": 2})
                assert not found.is_error, found.content
            ran = await client.call_tool("run_tests", {})
            assert not ran.is_error, ran.content
            assert ran.structured_content["status"] == "passed", ran.structured_content["output_tail"]
    done = subprocess.run(  # the same server on a regular file as stdin: the SDK's own streams, still served
        [sys.executable, "-m", "mcp_server", "serve", "--workspace", str(tmp_path)], env=env, stdin=subprocess.DEVNULL,
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def _line_within(stream: IO[bytes], seconds: float) -> bytes:
    """The next line of `stream`, or a failure after `seconds` (a request the server never answers)."""
    ready, _, _ = select.select([stream], [], [], seconds)
    assert ready, f"no answer within {seconds} s"
    return stream.readline()


HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def _raw_session(tmp_path: Path, lines: list[str], answers: int) -> list[dict]:
    """A real `serve` over stdio: the handshake, then `lines` as written; its first `answers` replies."""
    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path / "home"), "SKILLBANK_EMBEDDER": "hash"}
    handshake = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    with subprocess.Popen(
        [sys.executable, "-m", "mcp_server", "serve", "--workspace", str(tmp_path)], env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    ) as server:  # fmt: skip
        assert server.stdin is not None
        assert server.stdout is not None
        try:
            server.stdin.write("".join(line + "\n" for line in [*handshake, *lines]).encode())
            server.stdin.flush()
            return [json.loads(_line_within(server.stdout, 30)) for _ in range(answers)]
        finally:
            server.kill()


def test_a_real_server_answers_a_call_whose_arguments_hold_a_lone_surrogate(tmp_path: Path) -> None:
    """Raw lines: the SDK's own client cannot even send one (it refuses to encode the surrogate)."""
    call = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search_skills", '
        '"arguments": {"query": "KeyError \\ud800 qty"}}}'
    )
    answers = _raw_session(tmp_path, [call], 2)  # initialize's, the call's
    call = answers[1]
    assert call["id"] == 7
    assert call["result"]["isError"] is False


def test_calls_a_client_sends_without_waiting_for_answers_are_stored_in_the_order_sent(tmp_path: Path) -> None:
    """JSON-RPC lets a server answer requests in any order; their steps were stored shuffled (p7, p9, p2, ...)."""
    call = (
        '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "record_trajectory", "arguments": '
        '{"steps": [{"kind": "thought", "content": "p%d"}, {"kind": "observation", "content": "q%d"}]}}}'
    )
    answers = _raw_session(tmp_path, [call % (i + 2, i, i) for i in range(60)], 61)
    [tid] = {a["result"]["structuredContent"]["trajectory_id"] for a in answers[1:]}
    store = SQLiteTrajectoryStore(tmp_path / "home" / "trajectories.db")
    try:
        contents = [s.content for s in store.get(tid).steps]
    finally:
        store.close()
    assert contents == [f"{kind}{i}" for i in range(60) for kind in ("p", "q")]


def _deep(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


@pytest.mark.parametrize(
    ("line", "code", "request_id", "says"),
    [
        pytest.param('{"jsonrpc": "2.0", "id": 7, "method": "tools/ca', -32700, 7, "not JSON", id="cut-off"),
        pytest.param("[1, 2", -32700, None, "not JSON", id="cut-off-without-id"),
        pytest.param(
            '{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": 5}',
            -32602,
            8,
            "params",
            id="params-not-an-object",
        ),
        pytest.param('{"id": "x9"}', -32600, "x9", "not a JSON-RPC 2.0 message", id="not-a-message"),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "tools/call", "id": 10, "params": {"name": "search_skills", "arguments": '
            f'{{"query": "q", "tags": {_deep(300)}}}}}}}',
            -32600,
            10,
            "nested too deeply",
            id="too-deep-id-after-method",
        ),
        pytest.param(
            f'{{"jsonrpc": "2.0", "params": {{"_meta": {{"x": {_deep(5000)}, "id": 3}}}}, '
            '"id": "late", "method": "ping"}',
            -32600,
            "late",
            "nested too deeply",
            id="too-deep-an-inner-id-is-not-its-id",
        ),
    ],
)
def test_a_line_that_holds_no_message_is_answered_with_its_json_rpc_error(
    line: str, code: int, request_id: object, says: str
) -> None:
    answer = stdio.parse_line(line + "\n")
    assert isinstance(answer, stdio.Unreadable)
    assert answer.reply.error.code == code
    assert answer.reply.id == request_id
    assert says in answer.reply.error.message


@pytest.mark.parametrize("request_id", ["null", "true", "1.5", '{"a": 1}', "[1]"])
def test_a_request_whose_id_is_no_string_or_integer_is_an_invalid_request_not_a_notification(request_id: str) -> None:
    answer = stdio.parse_line(f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/list"}}\n')
    assert isinstance(answer, stdio.Unreadable)
    assert answer.reply.error.code == -32600
    assert answer.reply.id is None
    assert "is not a string or an integer" in answer.reply.error.message


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "id": 1}}',
    ],
)
def test_notifications_are_still_notifications(line: str) -> None:
    assert isinstance(stdio.parse_line(line), types.JSONRPCNotification)


def test_a_real_server_refuses_step_numbers_that_are_not_finite_and_stores_nothing(tmp_path: Path) -> None:
    """Python's JSON reader takes `Infinity` and `NaN`; stored, they made `trajectories export` write lines that
    are not JSON. (The SDK's own client sends them as null, so only a raw line can carry them.)"""
    call = (
        '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "record_trajectory", '
        '"arguments": {"steps": [{"kind": "thought", "content": "x", %s}]}}}'
    )
    lines = [call % (2, '"cost_usd": Infinity'), call % (3, '"duration_s": NaN'), call % (4, '"duration_s": 1.5')]
    answers = {a["id"]: a for a in _raw_session(tmp_path, lines, 4)}
    assert answers[2]["result"]["isError"] is True
    assert "cost_usd" in answers[2]["result"]["content"][0]["text"]
    assert answers[3]["result"]["isError"] is True
    assert "duration_s" in answers[3]["result"]["content"][0]["text"]
    assert answers[4]["result"]["structuredContent"]["total_steps"] == 1


def test_a_message_within_the_sdk_s_depth_is_read_as_the_sdk_reads_it() -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"_meta": {"x": 1}}})
    message = stdio.parse_line(line.replace("1}", _deep(150) + "}"))
    assert not isinstance(message, stdio.Unreadable)
    assert message.id == 4


def test_a_real_server_answers_unreadable_lines_and_goes_on_serving(tmp_path: Path) -> None:
    """Each was answered by nothing before (the SDK only logs a line it cannot read): its client waited forever."""
    step = {"kind": "tool_call", "content": "deep", "args": {"x": "DEEP"}}
    deep_call = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "record_trajectory", "arguments": {"steps": [step]}}}
    )  # fmt: skip
    lines = [
        deep_call.replace('"DEEP"', _deep(600)),
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 5}',
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/ca',
        "",  # a blank line: skipped, not answered
        deep_call.replace('"DEEP"', _deep(90)).replace('"id": 2', '"id": 5'),
        '{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
    ]
    answers = {a["id"]: a for a in _raw_session(tmp_path, lines, 7)}
    assert answers[2]["error"]["code"] == -32600
    assert answers[3]["error"]["code"] == -32602
    assert answers[4]["error"]["code"] == -32700
    assert answers[5]["result"]["isError"] is False
    assert answers[6]["result"] == {}
    assert answers[None]["error"]["code"] == -32600
