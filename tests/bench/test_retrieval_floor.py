"""Retrieval quality floor: hybrid search over the starter pack plus near-miss distractors, with real MiniLM.

The figures measured by `python -m bench.retrieval` are in docs/benchmarks/retrieval.md; the floors here sit a
little under them so that a regression fails the suite while small ranking changes do not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.retrieval.evaluate import (
    EvalQuery,
    Metrics,
    QueryResult,
    build_bank,
    compute_metrics,
    load_evalset,
    run_queries,
    summarize,
)

HYBRID_RECALL_AT_3_FLOOR = 0.88
HYBRID_MRR_FLOOR = 0.82
HYBRID_KIND_MRR_FLOOR = 0.80


def test_metrics_count_first_hits_top_three_and_reciprocal_ranks() -> None:
    m = compute_metrics([1, 2, None, 4])
    assert (m.n, m.recall_at_1, m.recall_at_3) == (4, 0.25, 0.5)
    assert m.mrr == pytest.approx((1 + 0.5 + 0.25) / 4)


def test_metrics_of_all_misses_are_zero() -> None:
    assert compute_metrics([None, None]) == Metrics(n=2, recall_at_1=0.0, recall_at_3=0.0, mrr=0.0)


def test_metrics_refuse_empty_or_zero_based_ranks() -> None:
    with pytest.raises(ValueError, match="at least one"):
        compute_metrics([])
    with pytest.raises(ValueError, match="1-based"):
        compute_metrics([0, 1])


def test_summary_splits_metrics_by_mode_and_query_kind() -> None:
    tb = EvalQuery("q1", "KeyError: 'x'", "traceback", "starter-a")
    desc = EvalQuery("q2", "a key is missing", "description", "starter-a")
    results = [
        QueryResult(tb, "hybrid", ("starter-a", "starter-b")),
        QueryResult(desc, "hybrid", ("starter-b", "starter-c", "starter-a")),
        QueryResult(tb, "keyword", ("starter-b",)),
        QueryResult(desc, "keyword", ("starter-a",)),
    ]
    table = summarize(results)
    assert table[("hybrid", "traceback")].mrr == 1.0
    assert table[("hybrid", "description")].mrr == pytest.approx(1 / 3)
    assert table[("hybrid", "all")].recall_at_3 == 1.0
    assert table[("keyword", "all")] == Metrics(n=2, recall_at_1=0.5, recall_at_3=0.5, mrr=0.5)
    assert ("vector", "all") not in table


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Metrics]:
    from skills_store.embedders import make_embedder

    home: Path = tmp_path_factory.mktemp("retrieval") / "home"
    bank = build_bank(home, make_embedder("minilm"))
    try:
        return summarize(run_queries(bank, load_evalset()))
    finally:
        bank.close()


@pytest.mark.minilm
@pytest.mark.slow
class TestRetrievalFloor:
    def test_hybrid_recall_at_3_and_mrr_stay_above_the_floor(self, measured: dict[tuple[str, str], Metrics]) -> None:
        hybrid = measured[("hybrid", "all")]
        assert hybrid.recall_at_3 >= HYBRID_RECALL_AT_3_FLOOR
        assert hybrid.mrr >= HYBRID_MRR_FLOOR

    def test_hybrid_mrr_holds_for_tracebacks_and_descriptions(self, measured: dict[tuple[str, str], Metrics]) -> None:
        assert measured[("hybrid", "traceback")].mrr >= HYBRID_KIND_MRR_FLOOR
        assert measured[("hybrid", "description")].mrr >= HYBRID_KIND_MRR_FLOOR

    def test_hybrid_mrr_is_at_least_vector_only_and_keyword_only(
        self, measured: dict[tuple[str, str], Metrics]
    ) -> None:
        hybrid = measured[("hybrid", "all")].mrr
        assert hybrid >= measured[("vector", "all")].mrr
        assert hybrid >= measured[("keyword", "all")].mrr
