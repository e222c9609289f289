"""Real sessions through the in-process MCP server on tmp git repos with real bugs -> the expected skills.

Each test drives `run_tests` (fails), `apply_patch`, `run_tests` and `record_trajectory(final=true)` through an
in-memory MCP client, exactly as an agent would, then distils what the server captured.
"""

from __future__ import annotations

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.outcome_hooks import on_close_callbacks
from mcp_server.services import build_deps, open_bank
from skills_store.distill.heuristic import PITFALL_PRIOR, HeuristicDistiller
from skills_store.distill.runner import distill_pending

pytestmark = pytest.mark.anyio

# The typo changes the file's size: a same-size edit within the second of the first run could be shadowed by the
# stale bytecode that run left in __pycache__ (mtime and size match).
SHOP = {
    "shop.py": "def total(items):\n    return sum(i.price for i in itms)\n",
    "tests/test_shop.py": (
        "from types import SimpleNamespace\n\nfrom shop import total\n\n\n"
        "def test_total():\n    assert total([SimpleNamespace(price=2), SimpleNamespace(price=3)]) == 5\n"
    ),
}
TYPO_FIX = """\
--- a/shop.py
+++ b/shop.py
@@ -1,2 +1,2 @@
 def total(items):
-    return sum(i.price for i in itms)
+    return sum(i.price for i in items)
"""
STATS = {
    "stats.py": "def mean(values):\n    return sum(values) / len(values)\n",
    "tests/test_stats.py": "from stats import mean\n\n\ndef test_mean_of_nothing():\n    assert mean([]) == 0\n",
}
WRONG_FIX = """\
--- a/stats.py
+++ b/stats.py
@@ -1,2 +1,2 @@
 def mean(values):
-    return sum(values) / len(values)
+    return float(sum(values)) / len(values)
"""


async def session(settings, calls: list[tuple[str, dict]], outcome: str):
    deps = build_deps(settings)
    results = []
    async with Client(create_server(deps)) as client:
        for tool, args in calls:
            results.append(await client.call_tool(tool, args))
        await client.call_tool("record_trajectory", {"steps": [], "outcome": outcome, "final": True})
    return deps, results


async def test_a_typo_fixed_in_a_real_session_becomes_a_nameerror_skill(make_repo, repo_settings) -> None:
    settings = repo_settings(make_repo(SHOP))
    deps, results = await session(
        settings, [("run_tests", {}), ("apply_patch", {"patch": TYPO_FIX}), ("run_tests", {})], "success"
    )
    assert [r.structured_content.get("status") for r in (results[0], results[2])] == ["failed", "passed"]
    bank = open_bank(settings)
    try:
        report = distill_pending(deps.trajectories, bank, HeuristicDistiller())
        [skill] = [bank.get(sid) for sid in report.added]
    finally:
        bank.close()
    [traj] = deps.trajectories.list()
    assert skill.pattern == "NameError: name '<name>' is not defined"
    assert skill.title == "NameError: fix a misspelt or wrong name"
    assert "rename `itms` to `items` in `shop.py`" in skill.strategy
    assert skill.sources == [traj.trajectory_id]
    assert (skill.language, skill.repo) == ("python", "acme/shop")
    assert skill.confidence == 0.7


async def test_a_bug_that_survives_the_attempted_fix_becomes_a_pitfall(make_repo, repo_settings) -> None:
    settings = repo_settings(make_repo(STATS, name="stats"))
    deps, _ = await session(
        settings, [("run_tests", {}), ("apply_patch", {"patch": WRONG_FIX}), ("run_tests", {})], "failure"
    )
    bank = open_bank(settings)
    try:
        report = distill_pending(deps.trajectories, bank, HeuristicDistiller())
        [skill] = [bank.get(sid) for sid in report.added]
    finally:
        bank.close()
    assert skill.pattern == "ZeroDivisionError: division by zero"
    assert "float division by zero" not in skill.pattern
    assert skill.confidence == PITFALL_PRIOR
    assert "What did not fix it: convert the value to the expected type" in skill.strategy


async def test_a_distilled_skill_is_suggested_next_time_and_gains_confidence_when_it_is_used(
    make_repo, repo_settings, tmp_path
) -> None:
    first = repo_settings(make_repo(SHOP))
    deps, _ = await session(
        first, [("run_tests", {}), ("apply_patch", {"patch": TYPO_FIX}), ("run_tests", {})], "success"
    )
    bank = open_bank(first)
    try:
        [skill_id] = distill_pending(deps.trajectories, bank, HeuristicDistiller()).added
    finally:
        bank.close()
    second = first.model_copy(update={"workspace": make_repo(SHOP, name="shop2")})
    deps = build_deps(second)
    deps.capture.on_close.extend(on_close_callbacks(deps.skills, deps.trajectories, second))
    async with Client(create_server(deps)) as client:
        failed = await client.call_tool("run_tests", {})
        await client.call_tool("apply_patch", {"patch": TYPO_FIX})
        await client.call_tool(
            "record_trajectory", {"steps": [], "outcome": "success", "final": True, "used_skills": [skill_id]}
        )
        await deps.capture.flush()
    assert skill_id in [s["skill_id"] for s in failed.structured_content["suggested_skills"]]
    bank = open_bank(second)
    try:
        skill = bank.get(skill_id)
    finally:
        bank.close()
    assert (skill.successes, skill.failures) == (1, 0)
    assert skill.confidence > 0.7
