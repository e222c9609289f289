"""The starter pack is offered once per data dir, to an empty store, unless turned off; Chroma never embeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server.services import open_bank
from mcp_server.settings import Settings
from skills_store.starter import load_starter_pack


def settings(tmp_path: Path, **extra: object) -> Settings:
    return Settings(home=tmp_path / "home", embedder="hash", workspace=tmp_path, **extra)  # type: ignore[arg-type]


def test_a_new_store_is_seeded_once_and_an_emptied_store_stays_empty(tmp_path: Path) -> None:
    bank = open_bank(settings(tmp_path))
    assert bank.count() == len(load_starter_pack()) >= 30
    bank.delete([s.skill_id for s in bank.list_skills(limit=1000)])
    bank.close()
    again = open_bank(settings(tmp_path))
    try:
        assert again.count() == 0
    finally:
        again.close()


def test_a_store_that_already_has_skills_gets_no_starter_pack(tmp_path: Path, skill_factory) -> None:
    first = open_bank(settings(tmp_path, starter_skills=False))
    first.upsert([skill_factory("mine", "Mine", "MyError: boom")])
    first.close()
    bank = open_bank(settings(tmp_path))
    try:
        assert [s.skill_id for s in bank.list_skills()] == ["mine"]
    finally:
        bank.close()


def test_starter_skills_off_leaves_a_new_store_empty_also_when_opened_later_with_them_on(tmp_path: Path) -> None:
    """The server was installed with SKILLBANK_STARTER_SKILLS=0; `skillbank distill` runs in a shell without it."""
    bank = open_bank(settings(tmp_path, starter_skills=False))
    try:
        assert bank.count() == 0
    finally:
        bank.close()
    later = open_bank(settings(tmp_path))
    try:
        assert later.count() == 0
    finally:
        later.close()


def test_chroma_never_instantiates_its_default_embedding_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chroma's default embedding function downloads a model: skillbank must never construct or call it."""
    from chromadb.utils import embedding_functions

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("Chroma's default embedding function was used")

    monkeypatch.setattr(embedding_functions.DefaultEmbeddingFunction, "__init__", refuse)
    monkeypatch.setattr(embedding_functions.DefaultEmbeddingFunction, "__call__", refuse)
    bank = open_bank(settings(tmp_path))
    try:
        assert bank.search("ModuleNotFoundError: No module named 'yaml'", 3, count_use=False)
        bank.reembed()
    finally:
        bank.close()
