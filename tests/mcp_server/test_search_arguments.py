"""search_skills' argument limits through a real in-memory client: a blank query and an over-long tag are refused
by the schema (nothing searched, nothing recorded), and a refusal never quotes back more than a short excerpt."""

from __future__ import annotations

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.services import build_deps, open_bank
from mcp_server.settings import Settings
from mcp_server.tools.search import MAX_TAG_CHARS

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(test_settings: Settings, skill_factory) -> Settings:
    bank = open_bank(test_settings)
    bank.upsert([skill_factory("keyerror", "KeyError", "KeyError: 'k'", "Use dict.get.", tags=["python"])])
    bank.close()
    return test_settings


def recorded_steps(deps) -> list:
    return [s for t in deps.trajectories.list() for s in deps.trajectories.get(t.trajectory_id).steps]


@pytest.mark.parametrize(
    "query", ["   ", "\n\t ", "\x00", "\x00 \x00\n", "\u3000\u2028", "\x1c\x1f", "\u200b", " \ufeff\u200d\u00ad\u2060 "]
)
async def test_a_blank_query_is_refused_before_anything_runs_or_is_recorded(settings: Settings, query: str) -> None:
    deps = build_deps(settings, tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("search_skills", {"query": query})
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("search_skills refused its arguments; nothing was done.")
    assert "argument 'query'" in text
    assert "the query is blank: pass the error message" in text
    assert recorded_steps(deps) == []
    assert deps.trajectories.list() == []


async def test_a_query_with_text_around_blanks_still_searches(settings: Settings) -> None:
    deps = build_deps(settings, tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("search_skills", {"query": " \x00 KeyError: 'k' \n"})
    assert not result.is_error
    assert [s["skill_id"] for s in result.structured_content["skills"]] == ["keyerror"]


async def test_a_tag_longer_than_any_stored_tag_is_refused_by_the_schema_in_a_short_text(settings: Settings) -> None:
    deps = build_deps(settings, tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("search_skills", {"query": "KeyError", "tags": ["x" * 1_000_000] * 4})
    tags = tools[0].input_schema["properties"]["tags"]
    assert tags["anyOf"][0]["items"] == {"type": "string", "maxLength": MAX_TAG_CHARS}
    assert result.is_error
    text = result.content[0].text
    assert "argument 'tags[0]': String should have at most 64 characters" in text
    assert len(text) < 1000
    assert deps.trajectories.list() == []


async def test_an_unknown_filter_value_is_quoted_back_as_a_short_excerpt(settings: Settings) -> None:
    deps = build_deps(settings, tools=["search_skills"])
    long_tag = "y" * MAX_TAG_CHARS
    async with Client(create_server(deps)) as client:
        tag = await client.call_tool("search_skills", {"query": "KeyError", "tags": [long_tag]})
        repo = await client.call_tool("search_skills", {"query": "KeyError", "repo": "me/" + "r" * 190})
    assert tag.is_error
    assert f"unknown tag '{'y' * 60}'... (64 characters)" in tag.content[0].text
    assert long_tag not in tag.content[0].text
    assert "(known: python)" in tag.content[0].text
    assert repo.is_error
    assert "... (193 characters)" in repo.content[0].text
    assert "r" * 100 not in repo.content[0].text
