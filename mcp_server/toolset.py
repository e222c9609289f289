"""`ToolSet`: the tools of one server, each built strict (`tool_inputs`) and with its errors routed (`errors`).

Tool modules register with `@toolset.tool(name=..., description=...)`, the same decorator shape as
`MCPServer.tool`; `create_server` hands `toolset.tools` to `MCPServer(tools=...)` and adds `toolset.guard()`, so
argument checking and error routing are defined once for every tool instead of in each adapter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.context import ServerMiddleware
from mcp.server.mcpserver.tools.base import Tool
from mcp_types import ToolAnnotations

from mcp_server.errors import routed
from mcp_server.tool_inputs import Advice, input_guard, make_strict

F = TypeVar("F", bound=Callable[..., Any])


class ToolSet:
    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.advice: dict[str, Advice] = {}

    def tool(
        self,
        *,
        name: str,
        description: str,
        annotations: ToolAnnotations | None = None,
        advice: Advice | None = None,
    ) -> Callable[[F], F]:
        """Register the decorated async function as tool `name`; `advice` refines refusals of its arguments."""

        def decorator(fn: F) -> F:
            built = Tool.from_function(routed(name, fn), name=name, description=description, annotations=annotations)
            self.tools[name] = make_strict(built)
            if advice:
                self.advice[name] = advice
            return fn

        return decorator

    def guard(self) -> ServerMiddleware[Any]:
        """The middleware refusing unknown tools and bad arguments before any tool runs."""
        return input_guard(self.tools, self.advice)
