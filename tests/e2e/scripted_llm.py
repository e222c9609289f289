"""A scripted model endpoint on 127.0.0.1: it stands in for the LLM only, never for the client under test.

It replays a fixed list of turns. The turn for a request is chosen from the conversation the client sends (how
many assistant turns it already holds), so retries and side requests of a client do not shift the script. It
speaks OpenAI Chat Completions, the OpenAI Responses API and the Anthropic Messages API, streaming or not, and
keeps every request body for the test to inspect.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: A turn: tool calls as (name, arguments), or the final text.
Turn = list[tuple[str, dict[str, Any]]] | str
USAGE = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}


class Script:
    def __init__(self, turns: list[Turn], pick: Callable[[dict[str, Any]], int]) -> None:
        self.turns = turns
        self.pick = pick
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def turn(self, body: dict[str, Any]) -> Turn:
        with self.lock:
            self.requests.append(body)
        index = self.pick(body)
        return self.turns[index] if index < len(self.turns) else "done"


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


# --- OpenAI Chat Completions ------------------------------------------------------------------------------------
def chat_index(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


def chat_reply(turn: Turn, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    model = body.get("model", "scripted")
    if isinstance(turn, str):
        message: dict[str, Any] = {"role": "assistant", "content": turn}
        finish = "stop"
    else:
        calls = [{"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                 for i, (name, args) in enumerate(turn)]  # fmt: skip
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        finish = "tool_calls"
    base = {"id": f"chatcmpl-{n}", "created": 1_700_000_000, "model": model}
    if not body.get("stream"):
        reply = {**base, "object": "chat.completion", "usage": USAGE,
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}]}  # fmt: skip
        return "application/json", json.dumps(reply).encode()
    delta = dict(message)
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(delta["tool_calls"])]
    chunk = {**base, "object": "chat.completion.chunk"}
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        (None, {**chunk, "choices": [], "usage": USAGE}),
        (None, "[DONE]"),
    ]
    return "text/event-stream", _sse(events)


# --- the server -----------------------------------------------------------------------------------------------------
class Endpoint:
    """A running scripted endpoint; `url` is its base (`http://127.0.0.1:PORT`)."""

    def __init__(self, server: ThreadingHTTPServer, script: Script) -> None:
        self.server = server
        self.script = script
        self.url = f"http://127.0.0.1:{server.server_address[1]}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.script.requests


Replier = Callable[[Turn, dict[str, Any], int], tuple[str, bytes]]


@contextmanager
def serve(turns: list[Turn], routes: dict[str, tuple[Callable[[dict[str, Any]], int], Replier]]) -> Iterator[Endpoint]:
    """Serve `turns` on the given routes (path suffix -> (turn picker, reply builder))."""
    scripts = {suffix: Script(turns, pick) for suffix, (pick, _) in routes.items()}
    shared = Script(turns, lambda b: 0)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(404)
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            path = self.path.split("?", 1)[0]
            for suffix, (_, reply) in routes.items():
                if path.endswith(suffix):
                    script = scripts[suffix]
                    turn = script.turn(body)
                    with shared.lock:
                        shared.requests.append({"path": path, **body})
                        n = len(shared.requests)
                    ctype, data = reply(turn, body, n)
                    self.send_response(200)
                    self.send_header("content-type", ctype)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
            self.send_response(404)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Endpoint(server, shared)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def chat_endpoint(turns: list[Turn]):
    return serve(turns, {"/chat/completions": (chat_index, chat_reply)})
