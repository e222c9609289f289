"""The catalog: atomic reads during writes, corrupt or old catalogs named or rebuilt."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from skills_store import catalog as catalog_module
from skills_store.bank import SkillBank
from skills_store.catalog import Catalog
from skills_store.datadir import preflight
from skills_store.errors import ConfigError


def test_a_reader_never_sees_a_half_written_skill(hash_bank: SkillBank, skill_factory) -> None:
    old = skill_factory("s", "OLD title", "OLD pattern", "OLD strategy")
    new = skill_factory("s", "NEW title", "NEW pattern", "NEW strategy")
    hash_bank.upsert([old])
    reader = Catalog(hash_bank.catalog.path, readonly=True)
    seen: set[tuple[str, str, str]] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            for skill in reader.get(["s"]):
                seen.add((skill.title[:3], skill.pattern[:3], skill.strategy[:3]))

    thread = threading.Thread(target=read)
    thread.start()
    for i in range(30):
        hash_bank.upsert([new if i % 2 == 0 else old])
    stop.set()
    thread.join(timeout=10)
    reader.close()
    assert seen <= {("OLD", "OLD", "OLD"), ("NEW", "NEW", "NEW")}
    assert seen


def test_a_corrupt_catalog_is_named_at_startup(tmp_path: Path) -> None:
    (tmp_path / "catalog.db").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ConfigError, match=r"skill catalog .*catalog\.db is not a SQLite database"):
        preflight(tmp_path)


def test_a_data_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "home"
    target.write_text("x")
    with pytest.raises(ConfigError, match=r"is not a directory|cannot create the data dir"):
        preflight(target)


def test_a_catalog_of_an_older_schema_is_rebuilt_from_chroma(hash_bank: SkillBank, skill_factory) -> None:
    from skills_store.embedders import make_embedder

    hash_bank.upsert([skill_factory("k", "KeyError", "KeyError: 'x'")])
    home = hash_bank.catalog.path.parent
    hash_bank.catalog.set_meta("schema", "0")
    hash_bank.close()
    reopened = SkillBank.open(home, make_embedder("hash"))
    try:
        assert reopened.catalog.get_meta("schema") == "2"
        assert [h.skill.skill_id for h in reopened.search("KeyError: 'x'", 1, mode="keyword", count_use=False)] == ["k"]
    finally:
        reopened.close()


def _writer(path: Path) -> sqlite3.Connection:
    """Another process's connection in the middle of a long write (a reindex): it holds the write lock."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("UPDATE meta SET value = value WHERE key = 'schema'")
    return other


def _without_rid_index(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX skill_tags_rid")
    db.close()


def test_rewriting_a_skill_finds_its_tag_rows_by_index(tmp_path: Path) -> None:
    with Catalog(tmp_path / "catalog.db") as catalog:
        plan = catalog.rows("EXPLAIN QUERY PLAN DELETE FROM skill_tags WHERE rid = ?", [1])
    assert "skill_tags_rid" in " ".join(str(r[-1]) for r in plan)


def test_an_older_catalog_without_the_tag_index_gets_it_on_open(tmp_path: Path) -> None:
    Catalog(tmp_path / "catalog.db").close()
    _without_rid_index(tmp_path / "catalog.db")
    with Catalog(tmp_path / "catalog.db") as catalog:
        assert catalog.rows("SELECT name FROM sqlite_master WHERE name = 'skill_tags_rid'") == [("skill_tags_rid",)]


def test_a_current_catalog_opens_while_another_process_holds_its_write_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog_module, "BUSY_TIMEOUT_S", 0.2)  # an open that waited for the lock would fail
    path = tmp_path / "catalog.db"
    Catalog(path).close()
    other = _writer(path)
    try:
        with Catalog(path) as catalog:
            assert catalog.count() == 0
    finally:
        other.close()


def test_a_catalog_busy_past_the_timeout_is_reported_busy_not_corrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog_module, "BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "catalog.db"
    Catalog(path).close()
    _without_rid_index(path)  # this open must write (add the index): it waits for the other writer
    other = _writer(path)
    try:
        with pytest.raises(ConfigError) as caught:
            Catalog(path)
    finally:
        other.close()
    assert "is busy" in str(caught.value)
    assert "corrupt" not in str(caught.value)
    assert "move it away" not in str(caught.value)


def test_a_search_answers_while_another_process_writes_and_its_uses_are_counted_later(
    hash_bank: SkillBank, skill_factory
) -> None:
    hash_bank.upsert([skill_factory("k", "KeyError", "KeyError: 'x'")])
    other = _writer(hash_bank.catalog.path)
    try:
        started = time.monotonic()
        hits = hash_bank.search("KeyError: 'x'", 1, mode="keyword")
        assert time.monotonic() - started < 5  # not the 30 s busy timeout
    finally:
        other.close()
    assert [(h.skill.skill_id, h.skill.uses) for h in hits] == [("k", 1)]
    assert hash_bank.catalog.pending_uses == 1
    hash_bank.search("KeyError: 'x'", 1, mode="keyword")
    assert hash_bank.catalog.pending_uses == 0
    assert hash_bank.get("k").uses == 2


def test_uses_counted_while_the_catalog_was_busy_are_written_on_close(tmp_path: Path, skill_factory) -> None:
    from skills_store.embedders import make_embedder

    bank = SkillBank.open(tmp_path / "bank", make_embedder("hash"))
    bank.upsert([skill_factory("k", "KeyError", "KeyError: 'x'")])
    other = _writer(bank.catalog.path)
    try:
        bank.search("KeyError: 'x'", 1, mode="keyword")
    finally:
        other.close()
    bank.close()
    with Catalog(tmp_path / "bank" / "catalog.db", readonly=True) as catalog:
        assert catalog.get(["k"])[0].uses == 1
