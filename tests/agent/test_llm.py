"""`agent.llm.resolve_model`: --llm / --model strings to pydantic-ai models, missing keys refused up front."""

from __future__ import annotations

import pytest
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from agent.llm import ModelConfigError, resolve_model
from skills_store.errors import ConfigError


def test_an_openai_model_with_a_key_uses_the_responses_api() -> None:
    model = resolve_model("openai:gpt-4o", {"OPENAI_API_KEY": "sk-test"})
    assert isinstance(model, OpenAIResponsesModel)
    assert model.model_name == "gpt-4o"
    assert model.base_url.startswith("https://api.openai.com")


def test_openai_chat_uses_chat_completions_with_or_without_a_gateway() -> None:
    direct = resolve_model("openai-chat:gpt-4o", {"OPENAI_API_KEY": "sk-test"})
    assert isinstance(direct, OpenAIChatModel)
    assert direct.base_url.startswith("https://api.openai.com")
    gateway = resolve_model("openai-chat:qwen", {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert isinstance(gateway, OpenAIChatModel)
    assert gateway.base_url.startswith("http://127.0.0.1:9/v1")


def test_openai_responses_uses_the_responses_api_with_or_without_a_gateway() -> None:
    direct = resolve_model("openai-responses:gpt-4o", {"OPENAI_API_KEY": "sk-test"})
    assert isinstance(direct, OpenAIResponsesModel)
    assert direct.base_url.startswith("https://api.openai.com")
    gateway = resolve_model("openai-responses:qwen", {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert isinstance(gateway, OpenAIResponsesModel)
    assert gateway.base_url.startswith("http://127.0.0.1:9/v1")


def test_a_gateway_url_routes_openai_models_and_bare_names_through_it() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "OPENAI_API_KEY": "k"}
    for spec in ("openai:llama-3.1-8b", "llama-3.1-8b"):
        model = resolve_model(spec, env)
        assert isinstance(model, OpenAIChatModel)
        assert model.model_name == "llama-3.1-8b"
        assert model.base_url.startswith("http://127.0.0.1:8000/v1")


def test_a_keyless_gateway_is_allowed() -> None:
    model = resolve_model("openai:qwen", {"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"})
    assert model.model_name == "qwen"


def test_an_anthropic_model_with_a_key_resolves() -> None:
    model = resolve_model("anthropic:claude-sonnet-4-5", {"ANTHROPIC_API_KEY": "k"})
    assert isinstance(model, AnthropicModel)
    assert model.model_name == "claude-sonnet-4-5"


@pytest.mark.parametrize(
    ("spec", "env", "message"),
    [
        ("openai:gpt-4o", {}, "OPENAI_API_KEY is not set"),
        ("anthropic:claude-sonnet-4-5", {"OPENAI_API_KEY": "k"}, "ANTHROPIC_API_KEY is not set"),
        ("gpt-4o", {}, "names no provider; write openai:gpt-4o"),
        ("mistral:large", {}, "unknown model provider 'mistral'"),
        ("openai:", {"OPENAI_API_KEY": "k"}, "no model name after the colon"),
        ("  ", {}, "the model is empty"),
        ("openai:qwen", {"OPENAI_BASE_URL": "localhost:8000"}, "OPENAI_BASE_URL='localhost:8000' is not an http"),
        ("anthropic:c", {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "ftp://x"}, "ANTHROPIC_BASE_URL='ftp://x'"),
    ],
)
def test_bad_model_strings_and_missing_keys_are_config_errors_that_say_what_to_set(
    spec: str, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ModelConfigError, match=message) as caught:
        resolve_model(spec, env)
    assert isinstance(caught.value, ConfigError)
