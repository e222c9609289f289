"""Test support for the agent: the buggy repo's files and fixes, and a scripted model that replays a fixed
sequence of turns (tool calls, then a final text), one per model request."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
FIX = """--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""
WRONG_FIX = FIX.replace("a + b", "a * b")
SYNTAX_FIX = FIX.replace("a + b", "a +")

Turn = list[tuple[str, dict[str, Any]]] | str


def scripted(turns: list[Turn]) -> FunctionModel:
    """Turn i answers the i-th request: a list of (tool, args) calls, or the final text. Past the end: "done"."""
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        turn = turns[len(seen) - 1] if len(seen) <= len(turns) else "done"
        if isinstance(turn, str):
            return ModelResponse(parts=[TextPart(turn)])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in turn])

    model = FunctionModel(respond)
    model.seen = seen  # type: ignore[attr-defined]
    return model
