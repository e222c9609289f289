"""Every tool publishes its output schema flat (`toolset.flat_schema`): no `$ref`, nullable fields as type lists,
and it accepts and refuses what the schema pydantic generates does."""

from __future__ import annotations

import copy
import json

import pytest
from jsonschema.validators import validator_for
from mcp import Client
from referencing import Registry

from mcp_server.app import create_server
from mcp_server.services import build_deps
from mcp_server.tools.search import SearchResult

pytestmark = pytest.mark.anyio

HIT = {
    "skill_id": "sk-1", "title": "t", "pattern": "KeyError: <key>", "strategy": "use .get", "confidence": 0.8,
    "score": 0.9, "tags": ["python"], "language": None, "repo": "me/app", "uses": 2, "sources": ["tr-1"],
    "relevance": 0.7, "rule": [{"before": "d[k]", "after": "d.get(k)"}],
}  # fmt: skip
GOOD = {"skills": [HIT, {**HIT, "language": "python"}], "took_ms": 1.5}


def _errors(schema: dict, instance: dict) -> list[str]:
    return [error.message for error in validator_for(schema)(schema, registry=Registry()).iter_errors(instance)]


def _with(path: tuple[str | int, ...], value: object) -> dict:
    instance = copy.deepcopy(GOOD)
    target = instance
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return instance


@pytest.mark.parametrize(
    "bad",
    [
        _with(("skills", 0, "language"), 3),
        _with(("skills", 1, "uses"), "2"),
        _with(("skills", 0, "tags"), [1]),
        _with(("skills", 0, "rule"), [{"before": 1}]),
        _with(("skills", 1, "relevance"), KeyError),
        _with(("took_ms",), None),
    ],
)
def test_the_flat_search_schema_refuses_what_the_generated_one_refuses(bad: dict) -> None:
    from mcp_server.toolset import flat_schema

    generated = SearchResult.model_json_schema()
    assert _errors(generated, bad)
    assert _errors(flat_schema(generated), bad)


async def test_every_tool_publishes_a_flat_output_schema_that_accepts_a_real_result(test_settings) -> None:
    settings = test_settings.model_copy(update={"starter_skills": True})
    async with Client(create_server(build_deps(settings))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        found = await client.call_tool("search_skills", {"query": "ModuleNotFoundError: No module named 'yaml'"})
    assert sorted(tools) == ["apply_patch", "record_trajectory", "run_tests", "search_skills"]
    for tool in tools.values():
        assert tool.output_schema is not None, tool.name
        assert "$ref" not in json.dumps(tool.output_schema), tool.name
        assert "$defs" not in tool.output_schema, tool.name
    search = tools["search_skills"].output_schema
    assert search["properties"]["skills"]["items"]["properties"]["language"]["type"] == ["string", "null"]
    assert found.structured_content["skills"]
    assert _errors(search, found.structured_content) == []
    assert _errors(search, GOOD) == []
