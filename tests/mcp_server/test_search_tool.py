"""search_skills through a real in-memory MCP client: contract fields, uses, errors, capture."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.services import build_deps, open_bank
from mcp_server.settings import Settings

pytestmark = pytest.mark.anyio

CONTRACT_FIELDS = {
    "skill_id", "title", "pattern", "strategy", "confidence", "score", "tags", "language", "repo", "uses", "sources",
    "relevance", "rule",
}  # fmt: skip


def seeded_settings(test_settings: Settings, skill_factory) -> Settings:
    bank = open_bank(test_settings)
    bank.upsert(
        [
            skill_factory(
                "missing-module", "Missing module", "ModuleNotFoundError: No module named 'X'",
                "Install the package into the interpreter that runs the tests.", language="python", tags=["imports"],
                sources=["traj-1"],
            ),
            skill_factory("keyerror", "KeyError", "KeyError: 'k'", "Use dict.get.", language="python"),
        ]
    )  # fmt: skip
    bank.close()
    return test_settings


async def test_search_returns_the_contract_fields_best_first(test_settings: Settings, skill_factory) -> None:
    deps = build_deps(seeded_settings(test_settings, skill_factory), tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("search_skills", {"query": "ModuleNotFoundError: No module named 'yaml'"})
    assert not result.is_error
    data = result.structured_content
    assert data is not None
    assert set(data) == {"skills", "took_ms"}
    top = data["skills"][0]
    assert set(top) == CONTRACT_FIELDS
    assert 0.0 <= top["relevance"] <= 1.0
    assert top["skill_id"] == "missing-module"
    assert top["uses"] == 1
    assert top["sources"] == ["traj-1"]
    assert "When you see: ModuleNotFoundError" in result.content[0].text


async def test_an_empty_store_answers_an_empty_list_not_an_error(test_settings: Settings) -> None:
    deps = build_deps(test_settings, tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("search_skills", {"query": "anything at all"})
    assert not result.is_error
    assert result.structured_content["skills"] == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"query": ""}, "at least 1 character"),
        ({"query": "   "}, "query is blank"),
        ({"query": "x" * 8001}, "at most 8000 characters"),
        ({"query": "x", "k": 0}, "greater than or equal to 1"),
        ({"query": "x", "k": 51}, "less than or equal to 50"),
        ({"query": "x", "language": "klingon"}, "unknown language 'klingon'"),
        ({"query": "x", "tags": ["nope"]}, "unknown tag 'nope'"),
    ],
)
async def test_bad_arguments_are_tool_errors_that_say_what_to_change(
    test_settings: Settings, skill_factory, args: dict, expected: str
) -> None:
    deps = build_deps(seeded_settings(test_settings, skill_factory), tools=["search_skills"])
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("search_skills", args)
    assert result.is_error
    assert expected in result.content[0].text


async def test_each_search_is_captured_into_the_session_trajectory(test_settings: Settings, skill_factory) -> None:
    deps = build_deps(seeded_settings(test_settings, skill_factory), tools=["search_skills", "record_trajectory"])
    async with Client(create_server(deps)) as client:
        await client.call_tool("search_skills", {"query": "KeyError: 'user'"})
        recorded = await client.call_tool("record_trajectory", {"steps": []})
    traj_id = recorded.structured_content["trajectory_id"]
    trajectory = deps.trajectories.get(traj_id)
    calls = [s for s in trajectory.steps if s.kind == "tool_call"]
    assert [s.tool for s in calls] == ["search_skills"]
    assert calls[0].ok is True
    assert calls[0].result["returned"][0] == "keyerror"
    assert "keyerror" in trajectory.skills_shown


async def test_the_handshake_does_not_import_torch_or_chromadb(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import anyio, sys\n"
        "from mcp import Client\n"
        "from mcp_server.app import create_server\n"
        "from mcp_server.services import build_deps\n"
        "from mcp_server.settings import Settings\n"
        f"s = Settings(home={str(tmp_path / 'h')!r}, workspace={str(tmp_path)!r})\n"
        "async def main():\n"
        "    async with Client(create_server(build_deps(s), warmup_after_s=None)) as c:\n"
        "        await c.list_tools()\n"
        "        print(sorted(m for m in ('torch', 'chromadb', 'sentence_transformers', 'transformers', 'docker')"
        " if m in sys.modules))\n"
        "anyio.run(main)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
