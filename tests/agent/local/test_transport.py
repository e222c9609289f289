"""The llama.cpp quirks, smoothed: content null and max_completion_tokens fixed on the way in, Qwen's text tool
calls turned into real ones on the way out, so pydantic-ai's tool-call structured output works. The server is
played by a scripted OpenAI-compatible endpoint (httpx2.MockTransport) with the real server's quirks."""

from __future__ import annotations

import json

import httpx2
import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, models
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from agent.local.server import LlamaServer
from agent.local.transport import LlamaTransport, fix_request, fix_response


class Lesson(BaseModel):
    title: str
    confidence: float


class StartedServer(LlamaServer):
    """Stands in for a started llama.cpp server; only its URL is used."""

    def __init__(self) -> None:
        super().__init__(model_path=None)  # type: ignore[arg-type]
        self.port = 48123
        self.starts = 0

    def ensure_started(self) -> str:
        self.starts += 1
        return self.base_url


def quirky_server(seen: list[dict]) -> httpx2.MockTransport:
    def handle(request: httpx2.Request) -> httpx2.Response:
        assert request.url.host == "127.0.0.1"
        assert request.url.port == 48123
        body = json.loads(request.content)
        seen.append(body)
        if any(m.get("role") == "assistant" and m.get("content") is None for m in body["messages"]):
            return httpx2.Response(400, json={"error": "content must not be null"})
        assert "max_completion_tokens" not in body
        call = {"name": body["tools"][0]["function"]["name"], "arguments": {"title": "Guard", "confidence": 0.7}}
        text = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
        message = {"role": "assistant", "content": text}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        reply = {"id": "c1", "object": "chat.completion", "created": 0, "model": "qwen", "choices": [choice]}
        return httpx2.Response(200, json=reply | {"usage": usage})

    return httpx2.MockTransport(handle)


def test_request_quirks_are_fixed() -> None:
    body = {"messages": [{"role": "assistant", "content": None, "tool_calls": []}], "max_completion_tokens": 64}
    assert fix_request(body) == {"messages": [{"role": "assistant", "content": "", "tool_calls": []}], "max_tokens": 64}


def test_text_tool_calls_become_tool_calls_and_plain_text_is_left_alone() -> None:
    text = 'Sure.\n<tool_call>\n{"name": "final_result", "arguments": {"x": 1}}\n</tool_call>'
    body = fix_response({"choices": [{"message": {"role": "assistant", "content": text}}]})
    message = body["choices"][0]["message"]
    assert message["tool_calls"][0]["function"] == {"name": "final_result", "arguments": '{"x": 1}'}
    assert message["content"] == "Sure."
    plain = {"choices": [{"message": {"role": "assistant", "content": "just text"}}]}
    assert fix_response(json.loads(json.dumps(plain))) == plain


@pytest.mark.anyio
async def test_structured_output_works_through_the_quirky_server() -> None:
    # Awaited on the test's own loop, the client closed after: `run_sync` would leave a loop open for the GC.
    seen: list[dict] = []
    server = StartedServer()
    async with httpx2.AsyncClient(transport=LlamaTransport(server, inner=quirky_server(seen))) as client:
        model = OpenAIChatModel("qwen", provider=OpenAIProvider(base_url="http://llama.local/v1", api_key="x",
                                                                  http_client=client))  # fmt: skip
        agent: Agent[None, Lesson] = Agent(model, output_type=Lesson)
        with models.override_allow_model_requests(True):
            result = await agent.run("distill this", model_settings={"max_tokens": 64})
    assert result.output == Lesson(title="Guard", confidence=0.7)
    assert seen[0]["max_tokens"] == 64
    assert server.starts >= 1


def test_an_unknown_local_model_is_a_clear_error() -> None:
    from agent.llm import resolve_model
    from agent.local.weights import LocalModelError

    with pytest.raises(LocalModelError, match="unknown local model 'gpt-9'"):
        resolve_model("local:gpt-9", {})
