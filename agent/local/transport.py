"""An httpx transport between pydantic-ai's OpenAI client and llama.cpp's server, smoothing the server's quirks.

Requests: it starts the server on first use and points the request at it; an assistant message with
`content: null` (which the server rejects) gets `""`; `max_completion_tokens` (which it ignores) becomes
`max_tokens`. Responses: Qwen's tool calls, which the server returns as text (`<tool_call>{"name": ...,
"arguments": {...}}</tool_call>`), become real `tool_calls`, so tool-call structured output (the LLM distiller's)
works. Streaming responses pass through untouched.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import anyio
import httpx2

from agent.local.server import LlamaServer

TOOL_CALL_RE = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


def fix_request(body: dict[str, Any]) -> dict[str, Any]:
    for message in body.get("messages", []):
        if message.get("role") == "assistant" and message.get("content") is None:
            message["content"] = ""
    if "max_completion_tokens" in body:
        value = body.pop("max_completion_tokens")
        body.setdefault("max_tokens", value)
    return body


def fix_response(body: dict[str, Any]) -> dict[str, Any]:
    for choice in body.get("choices", []):
        message = choice.get("message") or {}
        text = message.get("content")
        if message.get("tool_calls") or not isinstance(text, str):
            continue
        calls = []
        for raw in TOOL_CALL_RE.findall(text):
            try:
                call = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                arguments = call.get("arguments", {})
                calls.append({"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function", "function": {
                    "name": call["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                }})  # fmt: skip
        if calls:
            message["tool_calls"] = calls
            message["content"] = TOOL_CALL_RE.sub("", text).strip() or None
            choice["finish_reason"] = "tool_calls"
    return body


class LlamaTransport(httpx2.AsyncBaseTransport):
    def __init__(self, server: LlamaServer, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.server = server
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        base = httpx2.URL(await anyio.to_thread.run_sync(self.server.ensure_started))
        url = request.url.copy_with(scheme=base.scheme, host=base.host, port=base.port)
        content = await request.aread()
        headers = dict(request.headers)
        if content and "json" in headers.get("content-type", ""):
            content = json.dumps(fix_request(json.loads(content))).encode()
            headers["content-length"] = str(len(content))
        response = await self.inner.handle_async_request(
            httpx2.Request(request.method, url, headers=headers, content=content, extensions=request.extensions)
        )
        if "application/json" not in response.headers.get("content-type", ""):
            return response
        data = await response.aread()
        try:
            body = json.dumps(fix_response(json.loads(data))).encode()
        except (json.JSONDecodeError, AttributeError):
            body = data
        dropped = ("content-length", "content-encoding")
        out_headers = {k: v for k, v in response.headers.items() if k.lower() not in dropped}
        return httpx2.Response(response.status_code, headers=out_headers, content=body, extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()
