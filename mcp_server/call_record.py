"""What the capture stores of one tool call: the tool adapter's report (`CallRecord`) and the step made of it.

The step holds the call's arguments (bounded and redacted: `capture_text`), a redacted summary of its result, and
whether it failed and why; `SessionCapture` commits it before the tool's result goes back to the client.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from mcp_server.capture_text import CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS, CapturedArgs, redact_bounded
from mcp_server.errors import json_safe
from skills_store.models import Step
from skills_store.redact import Redactor


class CallRecord:
    """What a tool adapter reports about one call; set its fields inside `async with capture.tool_call(...)`."""

    def __init__(self) -> None:
        self.summary: BaseModel | dict[str, Any] | str | None = None
        """A short summary of the result (not the whole result): the tool's model in `trajectories.summaries`."""
        self.ok: bool = True
        """False when the call failed; set automatically when the block raises."""
        self.skills_shown: list[str] = []
        """Skill ids returned to the agent; linked to the trajectory for confidence updates."""
        self.reward: float | None = None
        """`run_tests`' reward; stored on the trajectory."""


def call_step(
    redactor: Redactor,
    tool: str,
    args: CapturedArgs,
    record: CallRecord,
    *,
    started_at: datetime,
    duration_s: float,
    error: str | None,
    wait_s: float,
) -> Step:
    """The `tool_call` step of one call. `wait_s`: how long to wait for the redaction worker's answer on a long
    argument before redacting it in this process (0 on the event loop)."""

    def bounded(value: Any) -> Any:
        return redact_bounded(redactor, value, CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)

    summary = record.summary.model_dump(mode="json") if isinstance(record.summary, BaseModel) else record.summary
    # json_safe: a refusal may quote a file's line or name that is not UTF-8 (a lone surrogate from
    # `surrogateescape`), which a Step cannot hold; it is stored escaped (`\xe9`), as the client sees it.
    return Step(
        kind="tool_call",
        tool=tool,
        args=json_safe(args.stored(wait_s)),
        result=json_safe(bounded(summary)),
        ok=record.ok,
        content=json_safe(bounded(error or "")),
        ts=started_at,
        duration_s=round(duration_s, 6),
    )
