"""Problem statements come from the failing output; the fix never appears in them, whoever writes them."""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent.tasks.statements import leaks_fix, model_statement, offline_statement
from sandbox.testing.models import TestCase

GOLD = """\
--- a/shop.py
+++ b/shop.py
@@ -1,2 +1,2 @@
 def total(prices):
-    return sum(prices) - 1
+    return sum(prices)
"""
FAILURE = TestCase(
    id="tests/test_shop.py::test_total",
    outcome="failed",
    message="assert 5 == 6\n>       assert total([1, 2, 3]) == 6\nE       assert 5 == 6\n"
    "    def total(prices):\n        return sum(prices)\n",
)


def test_the_offline_statement_quotes_the_failure_but_drops_lines_that_contain_the_fix() -> None:
    text = offline_statement("shop", [FAILURE], GOLD)
    assert "tests/test_shop.py::test_total" in text
    assert "assert 5 == 6" in text
    assert "return sum(prices)" not in text
    assert not leaks_fix(text, GOLD)


def scripted(reply: str) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        assert "tests/test_shop.py::test_total" in prompt
        assert "return sum(prices)" not in prompt
        return ModelResponse(parts=[TextPart(reply)])

    return FunctionModel(respond)


def test_a_model_writes_the_statement_from_the_failing_output() -> None:
    reply = "total() is off by one: total([1, 2, 3]) gives 5."
    text, tokens = model_statement(scripted(reply), "shop", [FAILURE], GOLD)
    assert text == "total() is off by one: total([1, 2, 3]) gives 5."
    assert tokens > 0


def test_a_model_statement_that_gives_the_fix_away_is_replaced_by_the_offline_one() -> None:
    text, _ = model_statement(scripted("Just write `return   sum(prices)` and it works."), "shop", [FAILURE], GOLD)
    assert text == offline_statement("shop", [FAILURE], GOLD)
