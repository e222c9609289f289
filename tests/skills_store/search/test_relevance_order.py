"""Hits ordered by calibrated relevance, and suggestions cut at the shipped threshold, with the real MiniLM model.

A failure whose lesson is in the bank gets it as its first suggestion; one whose lesson is not gets none (the
starter pack's look-alikes stay under the threshold); a skill whose pattern fits the failure ranks above one that
only repeats its words, although the fused score ranks them the other way.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skills_store.bank import SkillBank
from skills_store.models import EditRewrite
from skills_store.starter import load_starter_pack
from tests.conftest import make_skill

pytestmark = pytest.mark.minilm

CLOCK = "AttributeError: module 'time' has no attribute 'clock'"
CLOCK_LESSON = make_skill(
    "lesson-time-clock",
    "AttributeError: replace `time.clock()` with `time.perf_counter()`",
    CLOCK,
    "Rule: `time.clock()` -> `time.perf_counter()`\nWhy: time.clock was removed in Python 3.8.",
    rule=[EditRewrite(before="time.clock()", after="time.perf_counter()")],
)


@pytest.fixture(scope="module")
def embedder():
    from skills_store.embedders import make_embedder

    return make_embedder("minilm")


@pytest.fixture
def starter_bank(tmp_path: Path, embedder) -> Iterator[SkillBank]:
    with SkillBank.open(tmp_path / "bank", embedder) as bank:
        bank.upsert(load_starter_pack())
        yield bank


def test_a_failure_whose_lesson_is_in_the_bank_gets_it_as_the_first_suggestion(starter_bank: SkillBank) -> None:
    starter_bank.upsert([CLOCK_LESSON])
    found = starter_bank.suggest_for_failures([CLOCK])
    assert [h.skill.skill_id for h in found][:1] == ["lesson-time-clock"]
    assert all(h.relevance is not None and h.relevance >= 0.5 for h in found)


def test_failures_whose_lesson_is_not_in_the_bank_get_no_suggestion(starter_bank: SkillBank) -> None:
    for failure in (CLOCK, "sqlite3.OperationalError: database is locked"):
        assert starter_bank.suggest_for_failures([failure]) == [], failure
        assert starter_bank.search(failure, 3, count_use=False), "search_skills still ranks, with no threshold"


def test_a_skill_whose_pattern_fits_ranks_above_one_that_only_repeats_the_failures_words(
    tmp_path: Path, embedder
) -> None:
    fits = make_skill("fits", "Missing key in a dict lookup", "KeyError: '<name>'", "Use .get() with a default.")
    loud = make_skill(
        "loud",
        "qty column: KeyError 'qty' in the CSV report",
        "TypeError: unhashable type: 'list' while counting qty",
        "Convert the qty list to a tuple.",
    )
    with SkillBank.open(tmp_path / "bank", embedder) as bank:
        bank.upsert([fits, loud, make_skill("float", "Float equality", "AssertionError: assert 0.1 + 0.2 == 0.3")])
        hits = bank.search("KeyError: 'qty'", 3, count_use=False)
        by_id = {h.skill.skill_id: h for h in hits}
        assert by_id["loud"].score > by_id["fits"].score  # the fused score alone would put it first
        assert [h.skill.skill_id for h in hits][:2] == ["fits", "loud"]
        relevance = [h.relevance or 0.0 for h in hits]
        assert relevance == sorted(relevance, reverse=True)
        assert [h.skill.skill_id for h in bank.search("KeyError: 'qty'", 1, count_use=False)] == ["fits"]
