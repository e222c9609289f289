"""`local:NAME` -> a pydantic-ai model backed by llama.cpp's server (see the package doc). Makes no request: the
model file is assembled and the server started on the first request."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agent.local.server import LlamaServer
from agent.local.transport import LlamaTransport
from agent.local.weights import assemble, lookup

if TYPE_CHECKING:
    from pydantic_ai.models import Model

_SERVERS: dict[Path, LlamaServer] = {}


class _LazyModelFile(LlamaServer):
    """A server whose model file is assembled (once, checked) just before it first starts."""

    def __init__(self, name: str, home: Path, **kwargs: object) -> None:
        self.spec = lookup(name)
        self.home = home
        super().__init__(home / "models" / self.spec.filename, **kwargs)  # type: ignore[arg-type]

    def ensure_started(self) -> str:
        self.model_path = assemble(self.spec, self.home)
        return super().ensure_started()


def data_home(env: Mapping[str, str]) -> Path:
    if env.get("SKILLBANK_HOME"):
        return Path(env["SKILLBANK_HOME"]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("skillbank", appauthor=False))


def local_model(name: str, env: Mapping[str, str]) -> Model:
    """The model for `local:NAME`; one server per model file per process, shared by every model object."""
    import httpx2
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    spec = lookup(name)
    home = data_home(env)
    key = home / "models" / spec.filename
    server = _SERVERS.get(key)
    if server is None:
        server = _SERVERS[key] = _LazyModelFile(name, home, log=home / "models" / "llama-server.log")
    client = httpx2.AsyncClient(transport=LlamaTransport(server), timeout=httpx2.Timeout(600.0, connect=30.0))
    provider = OpenAIProvider(base_url="http://llama.local/v1", api_key="not-needed", http_client=client)
    return OpenAIChatModel(spec.name, provider=provider)
