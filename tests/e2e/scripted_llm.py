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
#: Warm-up turns at most before the script starts anyway (and the test then fails on what is missing).
MAX_WARMUPS = 30
USAGE = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}


class Script:
    """The turns, the picker, and an optional warm-up: while `ready(body)` is false (the client has not yet offered
    the tools the script needs, e.g. its MCP server is still starting) the `warmup` turn is answered instead, and
    the script starts once the tools are there."""

    def __init__(self, turns: list[Turn], pick: Callable[[dict[str, Any]], int],
                 ready: Callable[[dict[str, Any]], bool] | None = None, warmup: Turn = "waiting") -> None:  # fmt: skip
        self.turns = turns
        self.pick = pick
        self.ready = ready
        self.warmup = warmup
        self.warmups = 0
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def turn(self, body: dict[str, Any]) -> Turn:
        with self.lock:
            self.requests.append(body)
            if self.ready is not None and not self.ready(body) and self.warmups < MAX_WARMUPS:
                self.warmups += 1
                return self.warmup
        index = self.pick(body) - self.warmups
        return self.turns[index] if index < len(self.turns) else "done"


def offers(tool: str) -> Callable[[dict[str, Any]], bool]:
    """A readiness check: the request lists `tool` (Chat Completions, Messages or Responses shapes)."""

    def check(body: dict[str, Any]) -> bool:
        names = {t.get("name") or (t.get("function") or {}).get("name") for t in body.get("tools") or []}
        return tool in names

    return check


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


# --- Anthropic Messages -------------------------------------------------------------------------------------------
def messages_index(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


def messages_reply(turn: Turn, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    if isinstance(turn, str):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": turn}]
        stop = "end_turn"
    else:
        blocks = [{"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": args}
                  for i, (name, args) in enumerate(turn)]  # fmt: skip
        stop = "tool_use"
    usage = {"input_tokens": 50, "output_tokens": 1}
    message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": body.get("model", "scripted"),
               "stop_reason": None, "stop_sequence": None, "usage": usage}  # fmt: skip
    if not body.get("stream"):
        done = {**message, "content": blocks, "stop_reason": stop, "usage": {"input_tokens": 50, "output_tokens": 10}}
        return "application/json", json.dumps(done).encode()
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        ("message_start", {"type": "message_start", "message": {**message, "content": []}})
    ]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    events += [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 10}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return "text/event-stream", _sse(events)


# --- OpenAI Responses -----------------------------------------------------------------------------------------------
def responses_index(body: dict[str, Any]) -> int:
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return sum(1 for item in items if item.get("type") in ("function_call", "custom_tool_call"))


def _namespaced(name: str, body: dict[str, Any]) -> dict[str, str]:
    """`mcp__server__tool` as a call into the `mcp__server` namespace when the request offers one (Codex does)."""
    for tool in body.get("tools") or []:
        prefix = f"{tool.get('name')}__"
        if tool.get("type") == "namespace" and name.startswith(prefix):
            return {"namespace": tool["name"], "name": name[len(prefix) :]}
    return {"name": name}


def _text_events(item: dict[str, Any], index: int) -> list[tuple[str | None, dict[str, Any] | str]]:
    """A message's text as the Responses API streams it (clients such as pydantic-ai read only the deltas)."""
    part = item["content"][0]
    where = {"item_id": item["id"], "output_index": index, "content_index": 0}
    return [
        ("response.content_part.added", {"type": "response.content_part.added", **where,
                                         "part": {**part, "text": ""}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", **where, "delta": part["text"]}),
        ("response.output_text.done", {"type": "response.output_text.done", **where, "text": part["text"]}),
        ("response.content_part.done", {"type": "response.content_part.done", **where, "part": part}),
    ]  # fmt: skip


def responses_reply(turn: Turn, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    if isinstance(turn, str):
        text = [{"type": "output_text", "text": turn, "annotations": []}]
        items: list[dict[str, Any]] = [
            {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed", "content": text}
        ]
    else:
        items = [
            {"type": "function_call", "id": f"fc_{n}_{i}", "call_id": f"call_{n}_{i}", **_namespaced(name, body),
             "arguments": json.dumps(args), "status": "completed"}
            for i, (name, args) in enumerate(turn)
        ]  # fmt: skip
    usage = {"input_tokens": 50, "output_tokens": 10, "total_tokens": 60, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens_details": {"reasoning_tokens": 0}}  # fmt: skip
    response = {"id": f"resp_{n}", "object": "response", "created_at": 1_700_000_000, "model": body.get("model"),
                "status": "completed", "output": items, "usage": usage}  # fmt: skip
    if not body.get("stream"):
        return "application/json", json.dumps(response).encode()
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress",
                                                                        "output": []}}),
    ]  # fmt: skip
    for i, item in enumerate(items):
        added = {**item, "content": [], "status": "in_progress"} if item["type"] == "message" else item
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                      "item": added}))  # fmt: skip
        if item["type"] == "message":
            events += _text_events(item, i)
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                     "item": item}))  # fmt: skip
    events.append(("response.completed", {"type": "response.completed", "response": response}))
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
def serve(
    turns: list[Turn],
    routes: dict[str, tuple[Callable[[dict[str, Any]], int], Replier]],
    ready: Callable[[dict[str, Any]], bool] | None = None,
    warmup: Turn = "waiting",
) -> Iterator[Endpoint]:
    """Serve `turns` on the given routes (path suffix -> (turn picker, reply builder)); see `Script` for warm-up."""
    scripts = {suffix: Script(turns, pick, ready, warmup) for suffix, (pick, _) in routes.items()}
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


def messages_endpoint(turns: list[Turn], ready: Callable[[dict[str, Any]], bool] | None = None, warmup: Turn = ""):
    return serve(turns, {"/v1/messages": (messages_index, messages_reply)}, ready, warmup)


def responses_endpoint(turns: list[Turn]):
    return serve(turns, {"/responses": (responses_index, responses_reply)})
