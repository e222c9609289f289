"""The suggestion targets on the held-out split, with the real MiniLM model and the shipped coefficients.

`python -m bench.relevance` measures the whole labelled set (docs/benchmarks/relevance.md); this holds what is
reached on every other held-out query in hybrid mode: at most 10% of the cases whose lesson is not in the bank get
any suggestion (the issue's target), and when a case whose lesson is in the bank gets suggestions the first is
that lesson at least 90% of the time. The issue's first-rank over ALL such cases (a case with no suggestion is a
miss) is NOT at its 0.9 target: 0.53 on this subset, held at 0.5 so it cannot silently fall further; even without
a threshold the search ranks the lesson first in only 0.74 of them (docs/benchmarks/relevance.md, "Why").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.relevance import demo_check, fit_logistic, outcome
from bench.relevance_set import collect, held_out, load_queries
from skills_store.search.relevance import default_threshold, hybrid_model


def test_fitting_recovers_the_direction_that_separates_the_labels() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(400, 2))
    y = (x[:, 0] - 0.5 * x[:, 1] + rng.normal(scale=0.3, size=400) > 0).astype(float)
    w, _ = fit_logistic(x, y)
    assert w[0] > 0 > w[1]
    assert abs(w[0] / w[1]) == pytest.approx(2.0, rel=0.35)


@pytest.mark.minilm
def test_held_out_suggestions_meet_the_absent_target_and_hold_the_first_rank_reached(tmp_path: Path) -> None:
    from skills_store.embedders import make_embedder

    embedder = make_embedder("minilm")
    model, threshold = hybrid_model(), default_threshold()
    subset = [q for q in load_queries() if held_out(q)][::2]
    cases = collect(embedder, subset, tmp_path, modes=("hybrid",))
    result = outcome(cases, lambda h: model.predict(h.features), threshold)
    assert result.absent >= 25
    assert result.present >= 25
    assert result.absent_rate <= 0.10, result
    assert result.precision >= 0.9, result
    assert result.first_rank >= 0.5, result  # the target is 0.9: not reached (module doc)
    demo = demo_check(embedder, model, threshold, tmp_path)
    unrelated = [line for line in demo if "not a function" in line or "floating-point" in line]
    assert unrelated
    assert all(line.endswith("| not suggested |") for line in unrelated)
