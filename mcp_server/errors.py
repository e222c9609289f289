"""Errors routed to whoever must act on them, for every tool at once (`routed` wraps each tool function).

| raised                                                      | who acts  | the client sees                       |
| ----------------------------------------------------------- | --------- | ------------------------------------- |
| `ToolError`, `InvalidInput`, `RequestRefused` (bad request)  | the model | the message: what to change           |
| `ConfigError`, `SandboxUnavailable`, `SkillBankUnavailable`, | operator  | "the server is misconfigured ...      |
| other store/sandbox errors, `OSError`, `sqlite3.Error`       |           | logged as <id>", no paths, no details |
| anything else (our bug)                                      | us        | "internal error, logged as <id>"      |

The operator finds the full message (environment) or the traceback (bug) in the server log under the same id.

Everything a tool returns or raises goes out as JSON, which cannot carry a lone surrogate (what `surrogateescape`
makes of a file name that is not UTF-8): a tool shows such names quoted itself, and `tool_result` and `routed`
escape any that is left (`\\xff`), as the server's writer would otherwise die on it, taking the session along.
"""

from __future__ import annotations

import functools
import logging
import re
import sqlite3
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from mcp_server.lazy import SkillBankUnavailable
from sandbox.errors import (
    BackendUnavailable,
    RequestRefused,
    SandboxConfigError,
    SandboxError,
    SandboxUnavailable,
    WorkspaceUnavailable,
    WriteFailed,
)
from skills_store.errors import ConfigError, InvalidInput, SkillStoreError, StoreUnreachable

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

#: Requests the model must change: their message is the answer.
REFUSALS: tuple[type[Exception], ...] = (InvalidInput, RequestRefused)
#: Setup and environment problems, in the order they are matched: what the client is told (no internals).
ENVIRONMENT: tuple[tuple[type[Exception], str], ...] = (
    (BackendUnavailable, "the requested sandbox backend is not available on this server"),
    (WorkspaceUnavailable, "the server's workspace is unavailable"),
    (WriteFailed, "the server could not write the files (everything was rolled back)"),
    (SandboxConfigError, "the server's sandbox is misconfigured"),
    (SandboxUnavailable, "the server's sandbox is unavailable"),
    (SkillBankUnavailable, "the skill bank is unavailable on this server"),
    (ConfigError, "the server is misconfigured"),
    (StoreUnreachable, "the skill bank's Chroma server (SKILLBANK_CHROMA_URL) did not answer; try again once it is up"),
    (SkillStoreError, "the server's storage failed"),
    (SandboxError, "the server's sandbox failed"),
    (sqlite3.Error, "the server's storage failed"),
    (OSError, "the server hit a system error"),
)


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as a backslash escape: `\\xff` for a byte `surrogateescape` kept,
    `\\udXXX` for any other; text without one is returned as it is."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def json_safe(value: Any) -> Any:
    """`value` (a JSON-ready structure) with `escape_surrogates` applied to every string, keys included."""
    if isinstance(value, str):
        return escape_surrogates(value)
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


def incident_id() -> str:
    return f"err-{uuid.uuid4().hex[:12]}"


def route(tool: str, exc: Exception) -> ToolError:
    """The tool error to raise for `exc`, after logging what the operator needs (see the module doc)."""
    if isinstance(exc, REFUSALS):
        return ToolError(str(exc))
    for kind, public in ENVIRONMENT:
        if isinstance(exc, kind):
            incident = incident_id()
            # escaped: a message naming a file that is not UTF-8 must not break a log handler that encodes strictly
            log.error("%s: %s: %s [%s]", tool, type(exc).__name__, escape_surrogates(str(exc)), incident)
            workaround = getattr(exc, "workaround", None)
            meanwhile = f" Meanwhile you can {workaround}." if workaround else ""
            return ToolError(
                f"{public}; nothing was changed. This is for the server's operator to fix, not a problem with "
                f"your request (logged as {incident}); tell the user if it persists.{meanwhile}"
            )
    incident = incident_id()
    log.error("%s: internal error [%s]", tool, incident, exc_info=exc)
    return ToolError(f"internal error, logged as {incident}; the server log has the details")


def routed(tool: str, fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """`fn` with its exceptions routed (`route`); `ToolError` and protocol errors pass through unchanged."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except ToolError as exc:
            message = str(exc)
            if escape_surrogates(message) == message:
                raise
            raise ToolError(escape_surrogates(message)) from exc
        except MCPError:
            raise
        except Exception as exc:
            error = route(tool, exc)
            raise ToolError(escape_surrogates(str(error))) from exc

    return wrapper


def tool_result(model: BaseModel, text: str, **extra: Any) -> CallToolResult:
    """Structured content (the contract's model) plus readable text for the model, every string JSON can carry."""
    return CallToolResult(
        content=[TextContent(type="text", text=escape_surrogates(text))],
        structured_content=json_safe(model.model_dump(mode="json")),
        **extra,
    )
