"""Turning core exceptions into MCP tool errors, split by who must act.

The model can fix it (bad arguments, a patch that does not apply, an unknown filter value): a `ToolError` whose
text says what to change. Anything else is our bug: it propagates, the SDK logs the traceback and the client
sees only a short masked message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from mcp_server.lazy import SkillBankUnavailable
from sandbox.errors import SandboxError
from skills_store.errors import SkillStoreError


@contextmanager
def refusals_as_tool_errors() -> Iterator[None]:
    try:
        yield
    except (SkillStoreError, SandboxError, SkillBankUnavailable) as exc:
        raise ToolError(str(exc)) from exc


def tool_result(model: BaseModel, text: str) -> CallToolResult:
    """Structured content (the contract's model) plus readable text for the model."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=model.model_dump(mode="json")
    )
