"""Wilson intervals and the exact McNemar test, against values worked out by hand."""

from __future__ import annotations

import pytest

from agent.eval.stats import mcnemar_exact, paired, wilson


def test_wilson_interval_matches_the_textbook_value() -> None:
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_stays_inside_zero_one_at_the_extremes() -> None:
    assert wilson(0, 5)[0] == 0.0
    assert wilson(5, 5)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_mcnemar_exact_two_sided() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)


def test_paired_counts_only_shared_pairs() -> None:
    result = paired({"a": True, "b": True, "c": False, "x": True}, {"a": True, "b": False, "c": False, "y": True})
    assert (result.pairs, result.both, result.only_with, result.only_without, result.neither) == (3, 1, 1, 0, 1)
    assert result.difference == pytest.approx(1 / 3)
