"""search_skills sends its query to the embedder as soon as the call is routed (`early` hook), before the arguments
are checked: the search that follows takes that encode; a refused call records nothing; a failing hook is only
logged."""

from __future__ import annotations

import logging

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.services import build_deps
from mcp_server.settings import Settings
from skills_store.bank import SkillBank

pytestmark = pytest.mark.anyio


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """What the bank was asked, in order: ("prefetch", query) and ("search", query)."""
    seen: list[tuple[str, str]] = []
    real_search = SkillBank.search

    def prefetch(self: SkillBank, query: str) -> bool:
        seen.append(("prefetch", query))
        return True

    def search(self: SkillBank, query: str, *args, **kwargs):
        seen.append(("search", query))
        return real_search(self, query, *args, **kwargs)

    monkeypatch.setattr(SkillBank, "prefetch", prefetch)
    monkeypatch.setattr(SkillBank, "search", search)
    return seen


async def test_the_query_is_sent_ahead_before_the_search_runs(test_settings: Settings, events) -> None:
    deps = build_deps(test_settings, tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        first = await client.call_tool("search_skills", {"query": "opens the bank"})
        second = await client.call_tool("search_skills", {"query": "KeyError: 'user_id'", "k": 3})
    assert not first.is_error
    assert not second.is_error
    # The first call finds no open bank to send to; the second is sent ahead, then searched.
    query = "KeyError: 'user_id'"
    assert events == [("search", "opens the bank"), ("prefetch", query), ("search", query)]


async def test_a_refused_call_is_sent_ahead_but_records_and_counts_nothing(test_settings: Settings, events) -> None:
    deps = build_deps(test_settings, tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        await client.call_tool("search_skills", {"query": "opens the bank"})
        refused = await client.call_tool("search_skills", {"query": "KeyError: 'x'", "k": 0})
        too_long = await client.call_tool("search_skills", {"query": "x" * 8001})
    assert refused.is_error
    assert "k" in refused.content[0].text
    assert too_long.is_error
    assert events[1:] == [("prefetch", "KeyError: 'x'")]  # an over-long query is not even sent ahead
    steps = [s for t in deps.trajectories.list() for s in deps.trajectories.get(t.trajectory_id).steps]
    assert [s.args["query"] for s in steps if s.tool == "search_skills"] == ["opens the bank"]


async def test_a_failing_hook_is_logged_and_the_search_answers(
    test_settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(self: SkillBank, query: str) -> bool:
        raise RuntimeError("the worker pipe is gone")

    monkeypatch.setattr(SkillBank, "prefetch", broken)
    deps = build_deps(test_settings, tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        await client.call_tool("search_skills", {"query": "opens the bank"})
        with caplog.at_level(logging.ERROR, logger="mcp_server.tool_inputs"):
            result = await client.call_tool("search_skills", {"query": "AttributeError: 'NoneType'"})
    assert not result.is_error
    assert result.structured_content == {"skills": [], "took_ms": result.structured_content["took_ms"]}
    assert "early hook of search_skills failed" in caplog.text
