"""Review before sharing: candidate skills are stored and kept but served by nothing until approved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skills_store.bank import SkillBank
from skills_store.distill.merge import merge_into_bank
from skills_store.errors import InvalidInput, NotFound
from skills_store.jsonl import dump_skills, import_records, read_skill_records
from skills_store.models import Skill
from skills_store.search.keyword import quick_search

QUERY = "ModuleNotFoundError: No module named 'yaml'"


def _candidate(skill_factory, skill_id: str = "sk-yaml") -> Skill:
    return skill_factory(
        skill_id,
        "Install the missing yaml module",
        "ModuleNotFoundError: No module named 'yaml'",
        "Rule: add `pyyaml` to the dependencies.",
        status="candidate",
        sources=["traj-1"],
    )


def test_a_candidate_never_reaches_search_suggestions_or_the_hook(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([_candidate(skill_factory)])
    hash_bank.flush()
    assert hash_bank.search(QUERY, 5) == []
    assert hash_bank.suggest_for_failures([QUERY], 3, threshold=0.0) == []
    assert quick_search(hash_bank.catalog.path.parent, QUERY, 3) == []
    assert hash_bank.get("sk-yaml").uses == 0


def test_approving_makes_a_candidate_searchable(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([_candidate(skill_factory)])
    assert hash_bank.approve("sk-yaml").status == "active"
    assert [h.skill.skill_id for h in hash_bank.search(QUERY, 5)] == ["sk-yaml"]
    assert hash_bank.approve("sk-yaml").status == "active"  # approving twice changes nothing


def test_rejecting_deletes_a_candidate_and_refuses_an_active_skill(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([_candidate(skill_factory), skill_factory("sk-active", "Active", "KeyError: '<key>'")])
    hash_bank.reject("sk-yaml")
    with pytest.raises(NotFound):
        hash_bank.get("sk-yaml")
    with pytest.raises(InvalidInput, match="not a candidate"):
        hash_bank.reject("sk-active")
    assert hash_bank.get("sk-active").status == "active"
    with pytest.raises(NotFound):
        hash_bank.approve("sk-missing")


def test_list_by_status_shows_only_that_status(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([_candidate(skill_factory), skill_factory("sk-active", "Active", "KeyError: '<key>'")])
    assert [s.skill_id for s in hash_bank.list_skills(status="candidate")] == ["sk-yaml"]
    assert [s.skill_id for s in hash_bank.list_skills(status="active")] == ["sk-active"]
    assert len(hash_bank.list_skills()) == 2


def test_status_survives_reindex_and_an_export_import_round_trip(
    hash_bank: SkillBank, skill_factory, tmp_path: Path
) -> None:
    hash_bank.upsert([_candidate(skill_factory)])
    assert hash_bank.rebuild_catalog() == 1
    assert hash_bank.get("sk-yaml").status == "candidate"
    path = tmp_path / "skills.jsonl"
    path.write_text(dump_skills(hash_bank.list_skills()), encoding="utf-8")
    assert json.loads(path.read_text().splitlines()[0])["status"] == "candidate"
    hash_bank.delete(["sk-yaml"])
    import_records(hash_bank, read_skill_records(path))
    assert hash_bank.get("sk-yaml").status == "candidate"


def test_a_jsonl_line_without_status_reads_as_active(hash_bank: SkillBank, tmp_path: Path) -> None:
    line = {"skill_id": "sk-old", "title": "Old", "pattern": "KeyError: '<key>'", "strategy": "Use .get."}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    import_records(hash_bank, read_skill_records(path))
    assert hash_bank.get("sk-old").status == "active"


def test_a_candidate_draft_merged_into_an_active_lesson_keeps_it_active(hash_bank: SkillBank, skill_factory) -> None:
    active = skill_factory(
        "sk-active", "Install the missing yaml module", QUERY, "Add `pyyaml` to the dependencies.", sources=["t-1"]
    )
    hash_bank.upsert([active])
    draft = active.model_copy(update={"skill_id": "sk-draft", "sources": ["t-2"], "status": "candidate"})
    report = merge_into_bank(hash_bank, [draft])
    assert report.merged == [("sk-draft", "sk-active")]
    merged = hash_bank.get("sk-active")
    assert (merged.status, merged.sources) == ("active", ["t-1", "t-2"])
