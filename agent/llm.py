"""Model selection: a `--llm` / `--model` string -> a pydantic-ai model, with the keys it needs checked up front.

    openai:gpt-4o                  OpenAI Responses API; needs OPENAI_API_KEY
    openai:<model> + OPENAI_BASE_URL
                                   Chat Completions at that URL: the API every OpenAI-compatible gateway speaks
                                   (vLLM, llama.cpp, Ollama, LiteLLM, OpenRouter...); OPENAI_API_KEY when it wants one
    openai-chat:<model>            Chat Completions, at OPENAI_BASE_URL when set, else at OpenAI
    openai-responses:<model>       the Responses API, at OPENAI_BASE_URL when set (gateways that speak it: vLLM,
                                   LiteLLM, Ollama...), else at OpenAI
    <model> + OPENAI_BASE_URL      the same as openai:<model>, without the prefix
    anthropic:claude-sonnet-4-5    Anthropic Messages API; needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL optional)
    local:qwen2.5-coder-1.5b       a bundled GGUF served by llama.cpp on loopback (the `local` extra)

The environment is passed in (the CLI reads it once); nothing here reads `os.environ`. A missing key, a malformed
base URL or an unknown provider is a `ModelConfigError` naming the variable to set, raised before any request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from skills_store.errors import ConfigError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

#: Every provider prefix a model string may start with: what `split_spec` accepts and its refusal lists.
PROVIDERS = ("openai", "openai-chat", "openai-responses", "anthropic", "local")
#: Placeholder key for gateways that need none (the OpenAI client refuses an empty key).
NO_KEY = "not-needed"


class ModelConfigError(ConfigError):
    """The model string or the environment it needs is wrong; the message says what to set."""


def split_spec(spec: str, env: Mapping[str, str]) -> tuple[str, str]:
    """(provider, model name) of a model string, checked."""
    spec = spec.strip()
    if not spec:
        raise ModelConfigError("the model is empty; pass e.g. --llm openai:gpt-4o or --llm anthropic:claude-sonnet-4-5")
    provider, sep, name = spec.partition(":")
    if not sep:
        if env.get("OPENAI_BASE_URL"):
            return "openai", spec
        raise ModelConfigError(
            f"model {spec!r} names no provider; write openai:{spec} or anthropic:{spec}, or set OPENAI_BASE_URL "
            "to use it through an OpenAI-compatible gateway"
        )
    provider = provider.lower()
    if provider not in PROVIDERS:
        raise ModelConfigError(
            f"unknown model provider {provider!r} in {spec!r}; use one of {', '.join(PROVIDERS)} "
            "(any OpenAI-compatible gateway works as openai:<model> with OPENAI_BASE_URL set)"
        )
    if not name.strip():
        raise ModelConfigError(f"{spec!r} has no model name after the colon, e.g. {provider}:<model>")
    return provider, name.strip()


def _base_url(env: Mapping[str, str], variable: str) -> str | None:
    url = (env.get(variable) or "").strip()
    if not url:
        return None
    hint = f"set it like {variable}=http://host:8000/v1"
    if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1].strip("/")) == 0:
        raise ModelConfigError(f"{variable}={url!r} is not an http(s) URL; {hint}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0-65535
    except ValueError as exc:
        raise ModelConfigError(f"{variable}={url!r} is not a valid URL ({exc}); {hint}") from None
    if not parts.hostname:
        raise ModelConfigError(f"{variable}={url!r} names no host; {hint}")
    return url


def resolve_model(spec: str, env: Mapping[str, str]) -> Model:
    """The pydantic-ai model for `spec` (see the module doc). Makes no request."""
    provider, name = split_spec(spec, env)
    if provider == "local":
        from agent.local.model import local_model

        return local_model(name, env)
    if provider in ("openai", "openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        base_url = _base_url(env, "OPENAI_BASE_URL")
        key = env.get("OPENAI_API_KEY") or None
        if key is None and base_url is None:
            raise ModelConfigError(
                f"OPENAI_API_KEY is not set, and {spec!r} needs it: export OPENAI_API_KEY=..., or set "
                "OPENAI_BASE_URL to use an OpenAI-compatible gateway"
            )
        openai = OpenAIProvider(base_url=base_url, api_key=key or NO_KEY)
        if provider == "openai-responses" or (provider == "openai" and base_url is None):
            return OpenAIResponsesModel(name, provider=openai)
        return OpenAIChatModel(name, provider=openai)
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    key = env.get("ANTHROPIC_API_KEY") or None
    if key is None:
        raise ModelConfigError(f"ANTHROPIC_API_KEY is not set, and {spec!r} needs it: export ANTHROPIC_API_KEY=...")
    base_url = _base_url(env, "ANTHROPIC_BASE_URL")
    return AnthropicModel(name, provider=AnthropicProvider(api_key=key, base_url=base_url))
