"""What reaches an agent through the tools: relevance on every hit, suggestions only above the threshold, and no
candidate skill anywhere (a real in-memory MCP client, a real repo with a failing test, the hash embedder)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.services import build_deps, open_bank
from mcp_server.settings import Settings
from skills_store.models import Skill

pytestmark = pytest.mark.anyio

FAILURE = "AssertionError: assert 3.0 == 2"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text("def mean(values):\n    return sum(values) / len(values) + 1\n")
    (root / "test_calc.py").write_text("from calc import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def settings_with(tmp_path: Path, repo: Path, skills: list[Skill], **extra: object) -> Settings:
    settings = Settings(
        home=tmp_path / "home", embedder="hash", starter_skills=False, workspace=repo, test_python=sys.executable,
        sandbox="local", **extra,
    )  # fmt: skip
    with open_bank(settings) as bank:
        bank.upsert(skills)
    return settings


def lesson(skill_id: str, **extra: object) -> Skill:
    return Skill(
        skill_id=skill_id, title="Arithmetic assertion off by one", pattern=FAILURE,
        strategy="Check the formula for a stray constant.", language="python", **extra,
    )  # fmt: skip


async def test_a_candidate_skill_is_neither_suggested_nor_searchable(tmp_path: Path, repo: Path) -> None:
    deps = build_deps(settings_with(tmp_path, repo, [lesson("sk-review", status="candidate")]))
    async with Client(create_server(deps)) as client:
        run = (await client.call_tool("run_tests", {})).structured_content
        found = (await client.call_tool("search_skills", {"query": FAILURE})).structured_content
    assert run is not None
    assert run["status"] == "failed"
    assert run["suggested_skills"] == []
    assert found == {"skills": [], "took_ms": found["took_ms"]}


async def test_suggestions_carry_relevance_and_respect_the_configured_threshold(tmp_path: Path, repo: Path) -> None:
    settings = settings_with(tmp_path, repo, [lesson("sk-live")])
    async with Client(create_server(build_deps(settings))) as client:
        [suggested] = (await client.call_tool("run_tests", {})).structured_content["suggested_skills"]
        [hit] = (await client.call_tool("search_skills", {"query": FAILURE})).structured_content["skills"]
    assert suggested["skill_id"] == hit["skill_id"] == "sk-live"
    assert 0.0 < hit["relevance"] <= 1.0
    strict = settings.model_copy(update={"suggest_threshold": 1.0})
    async with Client(create_server(build_deps(strict))) as client:
        run = (await client.call_tool("run_tests", {})).structured_content
        found = (await client.call_tool("search_skills", {"query": FAILURE})).structured_content
    assert run["suggested_skills"] == []
    assert [h["skill_id"] for h in found["skills"]] == ["sk-live"]  # search still ranks, with its relevance
