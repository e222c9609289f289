"""The keyword side: BM25 over FTS5, facet tokens for filters, and the model-free search the hook uses."""

from __future__ import annotations

from pathlib import Path

from skills_store.bank import SkillBank
from skills_store.catalog import Catalog
from skills_store.search.keyword import KeywordIndex, quick_search
from skills_store.search.query import analyze


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


def test_quick_search_orders_by_relevance_so_a_fitting_pattern_beats_a_louder_keyword_match(
    hash_bank: SkillBank, skill_factory
) -> None:
    """The hook's search ranks as the full one does: a skill whose pattern fits the failure comes before one that
    only repeats the failure's words (BM25 puts that one first), and k=1 returns the fitting one."""
    hash_bank.upsert(
        [
            skill_factory("fits", "Missing key in a dict lookup", "KeyError: '<name>'", "Use .get() with a default."),
            skill_factory(
                "loud",
                "qty column: KeyError 'qty' in the qty report",
                "TypeError: unhashable type: 'list' while counting qty",
                "Convert the qty list to a tuple.",
            ),
        ]
    )
    home = hash_bank.catalog.path.parent
    with Catalog(home / "catalog.db", readonly=True) as catalog:
        by_bm25 = KeywordIndex(catalog).search(analyze("KeyError: 'qty'").keywords, 5, None)
    assert by_bm25[0][0] == "loud"
    assert [s.skill_id for s in quick_search(home, "KeyError: 'qty'", k=2)] == ["fits", "loud"]
    assert [s.skill_id for s in quick_search(home, "KeyError: 'qty'", k=1)] == ["fits"]
