"""Writers that read, work for seconds, then write: what other writers record meanwhile is kept; a write that dies
between Chroma and the catalog is undone on the next open; an interrupted dedupe counts nothing twice."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from skills_store.bank import SkillBank
from skills_store.distill.merge import MergeConfig, dedupe_bank, merge_into_bank
from skills_store.embedders import make_embedder
from skills_store.jsonl import import_records
from skills_store.models import Skill

STRATEGY = "Look the key up with .get() and a default instead of indexing the dict."


class DuringEmbed:
    """The bank's embedder, running `meanwhile` once, at its call number `at` (from 1): what another process does
    while a writer embeds (the writer holds no lock then)."""

    def __init__(self, inner, meanwhile: Callable[[], None], at: int) -> None:
        self.inner, self.meanwhile, self.calls, self.at = inner, meanwhile, 0, at
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.at:
            self.meanwhile()
        return self.inner.embed(texts)


def during_embed(bank: SkillBank, meanwhile: Callable[[], None], *, at: int = 1) -> None:
    bank.embedder = bank.record.embedder = DuringEmbed(bank.embedder, meanwhile, at)  # type: ignore[assignment]


def test_an_outcome_recorded_while_an_import_embeds_is_kept(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([skill_factory("team-1", "Team lesson", "TimeoutError: widget", "Retry it.")])
    during_embed(hash_bank, lambda: hash_bank.record_outcome(["team-1"], success=True))
    import_records(hash_bank, [{"skill_id": "team-1", "title": "Team lesson v2"}])
    stored = hash_bank.get("team-1")
    assert stored.title == "Team lesson v2"
    assert (stored.successes, stored.failures) == (1, 0)
    assert stored.confidence > 0.5
    assert hash_bank.store.get(["team-1"])[0].successes == 1


def test_an_approval_and_an_outcome_made_while_distill_merges_are_kept(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([skill_factory("lesson", "KeyError", "KeyError: '<name>'", STRATEGY, status="candidate",
                                    sources=["t1"], successes=2)])  # fmt: skip

    def meanwhile() -> None:
        hash_bank.approve("lesson")
        hash_bank.record_outcome(["lesson"], success=False)

    during_embed(hash_bank, meanwhile, at=2)  # 1: the drafts; 2: the merged text, after the target was read
    draft = skill_factory("lesson", "KeyError", "KeyError: '<name>'", "Catch the KeyError and log the missing key.",
                          status="candidate", sources=["t2"], successes=1)  # fmt: skip
    merge_into_bank(hash_bank, [draft])
    stored = hash_bank.get("lesson")
    assert stored.status == "active"
    assert (stored.successes, stored.failures) == (3, 1)
    assert set(stored.sources) == {"t1", "t2"}


def test_a_reembed_keeps_outcomes_made_meanwhile_and_brings_back_no_deleted_skill(
    hash_bank: SkillBank, skill_factory
) -> None:
    hash_bank.upsert([skill_factory(f"s{i}", f"Lesson {i}", f"ValueError: case {i}", "Fix it.") for i in range(3)])

    def meanwhile() -> None:
        hash_bank.record_outcome(["s0"], success=True)
        hash_bank.delete(["s2"])

    during_embed(hash_bank, meanwhile)
    assert hash_bank.reembed() == 3
    assert hash_bank.get("s0").successes == 1
    assert sorted(hash_bank.catalog.iter_ids()) == ["s0", "s1"]
    assert sorted(hash_bank.store.ids()) == ["s0", "s1"]


def test_an_outcome_recorded_while_dedupe_asks_its_merger_is_counted(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([
        skill_factory("keep", "KeyError", "KeyError: '<name>'", STRATEGY, sources=["a", "b"], successes=5),
        skill_factory("dup", "KeyError", "KeyError: '<name>'", STRATEGY, sources=["c"], successes=2),
    ])  # fmt: skip

    def merger(first: Skill, second: Skill) -> tuple[str, str] | None:
        hash_bank.record_outcome(["keep"], success=True)
        return None

    dedupe_bank(hash_bank, merger=merger)
    assert [s.skill_id for s in hash_bank.list_skills()] == ["keep"]
    assert hash_bank.get("keep").successes == 5 + 2 + 1


class Killed(Exception):
    """Stands for SIGKILL between the Chroma write and the catalog's commit."""


def die_before_catalog_commit(bank: SkillBank, monkeypatch: pytest.MonkeyPatch) -> None:
    def killed(*args: object, **kwargs: object) -> None:
        raise Killed

    monkeypatch.setattr(bank.catalog, "upsert", killed)


def reopen(bank: SkillBank) -> SkillBank:
    home = bank.catalog.path.parent
    bank.close()
    return SkillBank.open(home, make_embedder("hash"))


def titles(bank: SkillBank) -> tuple[dict[str, str], dict[str, str]]:
    ids = sorted(set(bank.catalog.iter_ids()) | set(bank.store.ids()))
    return (
        {s.skill_id: s.title for s in bank.catalog.get(ids)},
        {s.skill_id: s.title for s in bank.store.get(ids)},
    )


def test_an_import_killed_before_the_catalog_commit_is_undone_on_the_next_open(
    tmp_path: Path, skill_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = SkillBank.open(tmp_path / "bank", make_embedder("hash"))
    bank.upsert([skill_factory(f"s{i}", f"OLD {i}", f"ValueError: case {i}", "Fix it.") for i in range(4)])
    die_before_catalog_commit(bank, monkeypatch)
    update = [skill_factory(f"s{i}", f"NEW {i}", f"ValueError: case {i}", "Fix it.") for i in range(6)]
    with pytest.raises(Killed):
        bank.upsert(update)  # same count in both halves would pass a count check: 4 updated, 2 added
    monkeypatch.undo()
    assert bank.store.get(["s0"])[0].title == "NEW 0"  # Chroma holds the aborted write
    bank = reopen(bank)
    try:
        old = {f"s{i}": f"OLD {i}" for i in range(4)}
        assert titles(bank) == (old, old)
        assert bank.catalog.get_meta("pending") is None
        bank.rebuild_catalog()  # `skills reindex`: nothing of the aborted import comes back
        assert titles(bank) == (old, old)
    finally:
        bank.close()


def test_a_delete_killed_before_the_catalog_commit_is_undone_on_the_next_open(
    tmp_path: Path, skill_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = SkillBank.open(tmp_path / "bank", make_embedder("hash"))
    bank.upsert([skill_factory(f"s{i}", f"Lesson {i}", f"ValueError: case {i}", "Fix it.") for i in range(2)])

    def killed(skill_ids: object) -> None:
        raise Killed

    monkeypatch.setattr(bank.catalog, "delete", killed)
    with pytest.raises(Killed):
        bank.delete(["s1"])
    monkeypatch.undo()
    bank = reopen(bank)
    try:
        assert sorted(bank.store.ids()) == sorted(bank.catalog.iter_ids()) == ["s0", "s1"]
        assert bank.search("ValueError: case 1", 1, mode="vector", count_use=False)[0].skill.skill_id == "s1"
    finally:
        bank.close()


HOLD_LOCK = """
import sys
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("held", flush=True)
sys.stdin.read()
"""


def test_the_pending_write_of_a_running_writer_is_left_to_it(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([skill_factory("s", "Lesson", "ValueError: case", "Fix it.")])
    hash_bank.catalog.set_meta("pending", '["s"]')
    lock = hash_bank.catalog.path.with_name(".skills.lock")
    with subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout is not None
        assert holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        assert hash_bank.record.restore_pending() == 0  # it is writing: its marker is live
        assert hash_bank.catalog.get_meta("pending") == '["s"]'
        holder.stdin.close()
        holder.wait(timeout=30)
    assert hash_bank.record.restore_pending() == 1  # it is gone and left its marker: it died mid-write
    assert hash_bank.catalog.get_meta("pending") is None
    assert hash_bank.store.get(["s"])[0].title == "Lesson"


def test_an_interrupted_dedupe_counts_the_merged_copy_once(
    tmp_path: Path, skill_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = SkillBank.open(tmp_path / "bank", make_embedder("hash"))
    bank.upsert([
        skill_factory("keep", "KeyError", "KeyError: '<name>'", STRATEGY, sources=["a", "b"], successes=5,
                      failures=1, uses=10),
        skill_factory("dup", "KeyError", "KeyError: '<name>'", STRATEGY, sources=["c"], successes=2, failures=1,
                      uses=4),
    ])  # fmt: skip

    def killed(skill_ids: object) -> None:
        raise Killed

    monkeypatch.setattr(bank.store, "delete", killed)  # the survivor is in Chroma, the copy not yet deleted
    with pytest.raises(Killed):
        dedupe_bank(bank, config=MergeConfig(similarity=0.8))
    monkeypatch.undo()
    bank = reopen(bank)
    try:
        assert sorted(bank.store.ids()) == ["dup", "keep"]
        dedupe_bank(bank, config=MergeConfig(similarity=0.8))
        dedupe_bank(bank, config=MergeConfig(similarity=0.8))
        [kept] = bank.list_skills()
        assert (kept.skill_id, kept.successes, kept.failures, kept.uses) == ("keep", 7, 2, 14)
        assert bank.store.ids() == ["keep"]
    finally:
        bank.close()


def test_a_copy_already_merged_into_the_survivor_is_only_deleted(hash_bank: SkillBank, skill_factory) -> None:
    # What an older version left when it was killed between storing the survivor and deleting the copy.
    hash_bank.upsert([
        skill_factory("keep", "KeyError", "KeyError: '<name>'", STRATEGY, sources=["a", "b", "c"], successes=7),
        skill_factory("dup", "KeyError", "KeyError: '<name>'", STRATEGY, sources=["c"], successes=2),
    ])  # fmt: skip
    dedupe_bank(hash_bank, config=MergeConfig(similarity=0.8))
    assert [(s.skill_id, s.successes) for s in hash_bank.list_skills()] == [("keep", 7)]


def test_copies_without_sources_are_still_summed(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert([
        skill_factory("keep", "KeyError", "KeyError: '<name>'", STRATEGY, successes=3),
        skill_factory("dup", "KeyError", "KeyError: '<name>'", STRATEGY, successes=2),
    ])  # fmt: skip
    dedupe_bank(hash_bank, config=MergeConfig(similarity=0.8))
    assert [s.successes for s in hash_bank.list_skills()] == [5]
