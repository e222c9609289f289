"""Pruning: unhelpful skills nobody used for N days go, archived first; everything else stays."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from skills_store.errors import InvalidInput
from skills_store.jsonl import read_skill_records
from skills_store.models import utcnow
from skills_store.prune import apply_prune, default_archive, plan_prune

OLD = utcnow() - timedelta(days=200)


@pytest.fixture
def seeded(hash_bank, skill_factory):
    hash_bank.upsert(
        [
            skill_factory("bad-old", "Bad and old", "p1", confidence=0.2, created_at=OLD, updated_at=OLD),
            skill_factory("bad-new", "Bad but recent", "p2", confidence=0.2),
            skill_factory("good-old", "Good and old", "p3", confidence=0.8, created_at=OLD, updated_at=OLD),
            skill_factory("bad-used", "Bad, used lately", "p4", confidence=0.3, created_at=OLD, updated_at=OLD),
        ]
    )
    hash_bank.count_uses(["bad-used"])
    return hash_bank


def test_only_unconfident_skills_unused_for_the_period_are_candidates(seeded) -> None:
    plan = plan_prune(seeded.catalog, unused_days=90)
    assert [c.skill.skill_id for c in plan] == ["bad-old"]
    assert plan[0].idle_days == pytest.approx(200, abs=0.1)


def test_planning_changes_nothing(seeded) -> None:
    plan_prune(seeded.catalog, unused_days=90)
    assert seeded.count() == 4


def test_a_longer_period_or_lower_threshold_spares_more(seeded) -> None:
    assert plan_prune(seeded.catalog, unused_days=365) == []
    assert plan_prune(seeded.catalog, unused_days=90, below=0.1) == []


def test_applying_archives_the_skills_before_removing_them(seeded, tmp_path: Path) -> None:
    archive = tmp_path / "archive" / "pruned.jsonl"
    removed = apply_prune(seeded, plan_prune(seeded.catalog, unused_days=90), archive)
    assert removed == 1
    assert sorted(s.skill_id for s in seeded.list_skills()) == ["bad-new", "bad-used", "good-old"]
    [record] = read_skill_records(archive)
    assert record["skill_id"] == "bad-old"
    assert record["confidence"] == 0.2


def test_an_archive_that_cannot_be_written_removes_nothing(seeded, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    with pytest.raises(InvalidInput, match="is not a file"):
        apply_prune(seeded, plan_prune(seeded.catalog, unused_days=90), blocked)
    assert seeded.count() == 4


def test_archives_accumulate_and_can_be_imported_again(seeded, tmp_path: Path) -> None:
    archive = tmp_path / "a.jsonl"
    archive.write_text(json.dumps({"skill_id": "earlier", "title": "t", "pattern": "p", "strategy": "s"}) + "\n")
    apply_prune(seeded, plan_prune(seeded.catalog, unused_days=90), archive)
    assert [r["skill_id"] for r in read_skill_records(archive)] == ["earlier", "bad-old"]


@pytest.mark.parametrize(("days", "below", "message"), [(0, 0.5, "at least 1"), (30, 0.0, "in \\(0, 1\\]")])
def test_bad_settings_are_refused(seeded, days: int, below: float, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        plan_prune(seeded.catalog, unused_days=days, below=below)


def test_the_default_archive_lives_under_the_data_dir(tmp_path: Path) -> None:
    path = default_archive(tmp_path)
    assert path.parent == tmp_path / "archive"
    assert path.name.startswith("pruned-")
    assert path.suffix == ".jsonl"


def test_a_skill_awaiting_review_is_never_pruned(seeded, skill_factory) -> None:
    """A candidate is never served, so never used: it looked unused forever and went after 90 days; `skills reject`
    is what removes one."""
    seeded.upsert([skill_factory("in-review", "Awaiting review", "p5", confidence=0.1, created_at=OLD,
                                 updated_at=OLD, status="candidate")])  # fmt: skip
    assert [c.skill.skill_id for c in plan_prune(seeded.catalog, unused_days=90)] == ["bad-old"]


def test_a_skill_used_or_updated_after_the_plan_is_not_removed(seeded, skill_factory, tmp_path: Path) -> None:
    """`skills prune --apply` plans from the catalog, then loads the model and Chroma (seconds): a skill a running
    server showed an agent meanwhile, or whose outcome raised its confidence, was deleted all the same."""
    seeded.upsert([skill_factory(f"bad-old-{n}", f"Bad and old {n}", f"q{n}", confidence=0.2, created_at=OLD,
                                 updated_at=OLD) for n in (2, 3)])  # fmt: skip
    plan = plan_prune(seeded.catalog, unused_days=90)
    assert [c.skill.skill_id for c in plan] == ["bad-old", "bad-old-2", "bad-old-3"]
    seeded.count_uses(["bad-old"])  # the server, meanwhile: shown to an agent
    seeded.upsert([seeded.get("bad-old-2").model_copy(update={"confidence": 0.9})])  # an outcome raised it
    archive = tmp_path / "pruned.jsonl"
    assert apply_prune(seeded, plan, archive) == 1
    assert sorted(s.skill_id for s in seeded.list_skills()) == [
        "bad-new", "bad-old", "bad-old-2", "bad-used", "good-old"
    ]  # fmt: skip
    assert [r["skill_id"] for r in read_skill_records(archive)] == ["bad-old-3"]
