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
        ("openai:q", {"OPENAI_BASE_URL": "http://127.0.0.1:abc/v1"}, r"is not a valid URL \(Port could not be cast"),
        ("openai:q", {"OPENAI_BASE_URL": "http://127.0.0.1:99999/v1"}, r"is not a valid URL \(Port out of range"),
        ("openai:q", {"OPENAI_BASE_URL": "http://:8000/v1"}, "names no host"),
    ],
)
def test_bad_model_strings_and_missing_keys_are_config_errors_that_say_what_to_set(
    spec: str, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ModelConfigError, match=message) as caught:
        resolve_model(spec, env)
    assert isinstance(caught.value, ConfigError)


def test_the_unknown_provider_message_lists_every_provider_the_parser_accepts() -> None:
    from agent.llm import PROVIDERS, split_spec

    with pytest.raises(ModelConfigError) as caught:
        resolve_model("bogus:m", {})
    message = str(caught.value)
    assert "local" in PROVIDERS
    assert f"use one of {', '.join(PROVIDERS)} " in message
    for provider in PROVIDERS:
        assert split_spec(f"{provider}:m", {}) == (provider, "m")


def test_a_local_model_string_goes_to_the_local_backend() -> None:
    from agent.local.weights import LocalModelError

    with pytest.raises(LocalModelError, match="unknown local model 'gpt-9'"):
        resolve_model("local: gpt-9", {})
    with pytest.raises(ModelConfigError, match="no model name after the colon"):
        resolve_model("local:", {})
