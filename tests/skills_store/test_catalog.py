"""The catalog: atomic reads during writes, corrupt or old catalogs named or rebuilt."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

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
