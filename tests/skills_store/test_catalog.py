"""The catalog: keyword search without a model (for hooks), and atomic reads during writes."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from skills_store.bank import SkillBank
from skills_store.catalog import Catalog
from skills_store.datadir import preflight
from skills_store.errors import ConfigError
from skills_store.search.filters import Filters
from skills_store.search.keyword import quick_search


def test_quick_search_finds_skills_by_keyword_without_a_model(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert(
        [
            skill_factory("dict-iter", "Dict changed size", "RuntimeError: dictionary changed size during iteration"),
            skill_factory("loop-closed", "Event loop closed", "RuntimeError: Event loop is closed"),
        ]
    )
    home = hash_bank.catalog.path.parent
    found = quick_search(home, "RuntimeError: dictionary changed size during iteration", k=1)
    assert [s.skill_id for s in found] == ["dict-iter"]


def test_quick_search_without_a_catalog_returns_nothing(tmp_path: Path) -> None:
    assert quick_search(tmp_path, "anything") == []


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


def test_filters_build_sql_for_every_field() -> None:
    where, params = Filters(language="python", repo="a/b", tags=("x", "y"), min_confidence=0.5).sql()
    assert "s.language = ?" in where
    assert "s.repo = ?" in where
    assert "HAVING COUNT(*) = ?" in where
    assert params == ["python", "a/b", 0.5, "x", "y", 2]


def test_a_corrupt_catalog_is_named_at_startup(tmp_path: Path) -> None:
    (tmp_path / "catalog.db").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ConfigError, match=r"skill catalog .*catalog\.db is not a SQLite database"):
        preflight(tmp_path)


def test_a_data_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "home"
    target.write_text("x")
    with pytest.raises(ConfigError, match=r"is not a directory|cannot create the data dir"):
        preflight(target)


def test_keyword_filters_match_tags_with_punctuation_exactly(hash_bank: SkillBank, skill_factory) -> None:
    hash_bank.upsert(
        [
            skill_factory("cpp", "Segfault", "Segmentation fault in vector access", tags=["c++"], language="c++"),
            skill_factory("c", "Segfault in C", "Segmentation fault in array access", tags=["c"], language="c"),
        ]
    )
    hits = hash_bank.search("Segmentation fault", 5, mode="keyword", tags=["c++"], count_use=False)
    assert [h.skill.skill_id for h in hits] == ["cpp"]
    hits = hash_bank.search("Segmentation fault", 5, mode="keyword", language="c", count_use=False)
    assert [h.skill.skill_id for h in hits] == ["c"]


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
