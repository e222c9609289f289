"""The on_close callbacks: outcomes move skill confidence (never lost), and the optional background distill pass."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.lazy import LazySkillBank
from mcp_server.outcome_hooks import OutcomeHooks, on_close_callbacks
from mcp_server.recording import used_skills_step
from mcp_server.services import build_deps, open_bank
from mcp_server.settings import Settings
from skills_store.distill.outcomes import file_lock
from skills_store.models import Step
from skills_store.redact import Redactor
from skills_store.trajectories.store import SQLiteTrajectoryStore

MESSAGE = "NameError: name 'itms' is not defined\n\nshop.py:2: NameError"
PATCH = "--- a/shop.py\n+++ b/shop.py\n@@ -1,2 +1,2 @@\n def total(items):\n-    return itms\n+    return items\n"
FIX_STEPS = [
    {"kind": "tool_call", "tool": "run_tests", "ok": False, "args": {"tests": None},
     "result": {"status": "failed", "failing": ["t::a"], "failures": [{"id": "t::a", "message": MESSAGE}]}},
    {"kind": "tool_call", "tool": "apply_patch", "ok": True, "args": {"patch": PATCH, "dry_run": False},
     "result": {"applied": True, "files": ["modify shop.py"], "fuzzy": False}},
    {"kind": "tool_call", "tool": "run_tests", "ok": True, "args": {"tests": None}, "result": {"status": "passed"}},
]  # fmt: skip


@pytest.fixture
def seeded(test_settings: Settings, skill_factory) -> Settings:
    bank = open_bank(test_settings)
    bank.upsert([skill_factory("shown", "Shown skill", "KeyError: '<name>'", confidence=0.6)])
    bank.close()
    return test_settings


def close_one(store: SQLiteTrajectoryStore, outcome: str, shown: list[str], steps: list[dict] = ()) -> str:
    """A closed trajectory that was shown `shown` and says it used them (only used skills are credited)."""
    tid = store.create(task="t").trajectory_id
    store.append(tid, [Step(**s) for s in steps] + ([used_skills_step(Redactor(), shown)] if shown else []))
    store.link_skills(tid, shown)
    store.close_trajectory(tid, outcome)
    return tid


def opened(settings: Settings) -> LazySkillBank:
    lazy = LazySkillBank(lambda: open_bank(settings))
    anyio.run(lazy.run, 0.0)
    return lazy


def test_outcomes_are_always_wired_and_distilling_only_when_configured(test_settings: Settings) -> None:
    store = SQLiteTrajectoryStore(test_settings.home / "trajectories.db")
    lazy = LazySkillBank(lambda: open_bank(test_settings))
    assert len(on_close_callbacks(lazy, store, test_settings)) == 1
    on = test_settings.model_copy(update={"distill_on_close": True})
    assert len(on_close_callbacks(lazy, store, on)) == 2
    store.close()


def test_a_close_before_the_bank_opens_is_counted_on_the_next_close(seeded: Settings) -> None:
    store = SQLiteTrajectoryStore(seeded.home / "trajectories.db")
    lazy = LazySkillBank(lambda: open_bank(seeded))
    hooks = OutcomeHooks(lazy, store)
    first = close_one(store, "success", ["shown"])
    hooks.apply_outcomes(store.get(first))
    anyio.run(lazy.run, 0.0)
    second = close_one(store, "success", ["shown"])
    hooks.apply_outcomes(store.get(second))
    bank = lazy.get_nowait()
    assert bank is not None
    assert bank.get("shown").successes == 2
    anyio.run(lazy.aclose)
    store.close()


def test_the_background_pass_distils_the_closed_trajectory(seeded: Settings) -> None:
    store = SQLiteTrajectoryStore(seeded.home / "trajectories.db")
    lazy = opened(seeded)
    tid = close_one(store, "success", [], FIX_STEPS)
    OutcomeHooks(lazy, store, distill=True).distill_closed(store.get(tid))
    bank = lazy.get_nowait()
    assert [s.pattern for s in bank.list_skills() if tid in s.sources] == ["NameError: name '<name>' is not defined"]
    assert store.pending_for("heuristic") == []
    anyio.run(lazy.aclose)
    store.close()


def test_under_review_the_background_pass_stores_candidates(seeded: Settings) -> None:
    store = SQLiteTrajectoryStore(seeded.home / "trajectories.db")
    lazy = opened(seeded)
    tid = close_one(store, "success", [], FIX_STEPS)
    settings = seeded.model_copy(update={"distill_on_close": True, "review": True})
    _, distill_closed = on_close_callbacks(lazy, store, settings)
    distill_closed(store.get(tid))
    bank = lazy.get_nowait()
    assert [s.status for s in bank.list_skills() if tid in s.sources] == ["candidate"]
    anyio.run(lazy.aclose)
    store.close()


def test_the_background_pass_leaves_the_work_to_a_pass_already_running(seeded: Settings) -> None:
    store = SQLiteTrajectoryStore(seeded.home / "trajectories.db")
    lazy = opened(seeded)
    tid = close_one(store, "success", [], FIX_STEPS)
    lock = lazy.get_nowait().catalog.path.with_name(".distill-heuristic.lock")
    with file_lock(lock):
        OutcomeHooks(lazy, store, distill=True).distill_closed(store.get(tid))
    assert [t.trajectory_id for t in store.pending_for("heuristic")] == [tid]
    anyio.run(lazy.aclose)
    store.close()


@pytest.mark.anyio
async def test_a_session_closed_through_the_server_moves_confidence_and_is_distilled(
    seeded: Settings, tmp_path: Path
) -> None:
    settings = seeded.model_copy(update={"distill_on_close": True})
    deps = build_deps(settings, tools=["search_skills", "record_trajectory"])
    deps.capture.on_close.extend(on_close_callbacks(deps.skills, deps.trajectories, settings))
    async with Client(create_server(deps)) as client:
        found = await client.call_tool("search_skills", {"query": "KeyError: 'user'"})
        assert found.structured_content["skills"][0]["skill_id"] == "shown"
        await client.call_tool(
            "record_trajectory", {"steps": FIX_STEPS, "used_skills": ["shown"], "outcome": "success", "final": True}
        )
        await deps.capture.flush()
    bank = open_bank(settings)
    try:
        shown = bank.get("shown")
        learned = [s for s in bank.list_skills() if s.skill_id != "shown"]
    finally:
        bank.close()
    assert (shown.successes, shown.failures) == (1, 0)
    assert shown.confidence > 0.6
    assert [s.pattern for s in learned] == ["NameError: name '<name>' is not defined"]
