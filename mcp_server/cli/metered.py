"""`MeteredModel`: a pydantic-ai model that counts what came back from the one it wraps (for `skillbank distill`).

The exit status and the token count of a run need what the model actually did: how many requests were sent, the
usage the model reported (a request that failed reported none), and the last error, which says whether the
endpoint was reached at all.
"""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings


class MeteredModel(WrapperModel):
    def __init__(self, wrapped: Model) -> None:
        super().__init__(wrapped)
        self.sent = 0
        """Requests sent, answered or not."""
        self.tokens = 0
        """Input plus output tokens of the usage the model reported."""
        self.error: str | None = None
        """The last request's error (`Type: message`), if it raised."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self.sent += 1
        try:
            response = await super().request(messages, model_settings, model_request_parameters)
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            raise
        self.error = None
        self.tokens += response.usage.input_tokens + response.usage.output_tokens
        return response
