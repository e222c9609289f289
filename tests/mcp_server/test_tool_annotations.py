"""tools/list carries every tool's annotations, the hints clients decide approvals on (Codex asks before a tool
that is not read-only unless it says it is neither destructive nor open-world)."""

from __future__ import annotations

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.deps import ALL_TOOLS
from mcp_server.services import build_deps
from mcp_server.settings import Settings

pytestmark = pytest.mark.anyio


async def listed_annotations(settings: Settings) -> dict[str, dict[str, object]]:
    async with Client(create_server(build_deps(settings))) as client:
        tools = (await client.list_tools()).tools
    assert sorted(t.name for t in tools) == sorted(ALL_TOOLS)
    return {t.name: t.annotations.model_dump(by_alias=True, exclude_none=True) for t in tools if t.annotations}


async def test_search_skills_is_listed_read_only_idempotent_and_closed_world(test_settings: Settings) -> None:
    hints = (await listed_annotations(test_settings))["search_skills"]
    assert hints == {"title": "Search skills", "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                     "openWorldHint": False}  # fmt: skip


async def test_run_tests_writes_but_destroys_nothing_and_stays_closed_world(test_settings: Settings) -> None:
    hints = (await listed_annotations(test_settings))["run_tests"]
    assert hints["readOnlyHint"] is False
    assert hints["destructiveHint"] is False
    assert hints["idempotentHint"] is True
    assert hints["openWorldHint"] is False


async def test_apply_patch_is_listed_destructive_and_not_idempotent(test_settings: Settings) -> None:
    hints = (await listed_annotations(test_settings))["apply_patch"]
    assert hints.get("readOnlyHint", False) is False
    assert hints["destructiveHint"] is True
    assert hints["idempotentHint"] is False
    assert hints["openWorldHint"] is False


async def test_record_trajectory_appends_and_is_not_destructive(test_settings: Settings) -> None:
    hints = (await listed_annotations(test_settings))["record_trajectory"]
    assert hints == {"title": "Record trajectory", "readOnlyHint": False, "destructiveHint": False,
                     "idempotentHint": False, "openWorldHint": False}  # fmt: skip
