"""What suggestions and search would return for the labelled cases under a predictor, and how often it is right.

Used by `bench.relevance` (the report, choosing the threshold) and its tests. A predictor gives each hit a value
the threshold cuts on and a key it is ordered by: for the calibrated relevance the key is the relevance times the
confidence prior, as `search.engine` orders hits; for the fused score (the baseline, the order before relevance
existed) both are the score, which already carries the prior.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bench.relevance_set import Case, Hit
from skills_store.search.fusion import FusionConfig
from skills_store.search.relevance import RelevanceModel

SUGGEST = 3
"""Suggestions a test run carries at most (run_tests)."""
MAX_ABSENT_RATE = 0.08
"""The threshold is the lowest that keeps train cases whose lesson is absent at or under this rate (2 points under
the 10% target)."""
_FUSION = FusionConfig()


@dataclass(frozen=True)
class Predictor:
    name: str
    value: Callable[[Hit], float]
    """What the threshold cuts on."""
    key: Callable[[Hit], float]
    """What hits are ordered by, best first."""


def relevance_predictor(name: str, model: RelevanceModel) -> Predictor:
    w = _FUSION.confidence_weight

    def value(h: Hit) -> float:
        return model.predict(h.features)

    return Predictor(name, value, lambda h: value(h) * (1.0 - w + w * h.confidence))


FUSED = Predictor("raw fused score", lambda h: h.score, lambda h: h.score)


@dataclass(frozen=True)
class Outcome:
    absent: int
    absent_suggested: int
    present: int
    present_suggested: int
    first_right: int
    """Present cases whose first suggestion is right."""

    @property
    def absent_rate(self) -> float:
        return self.absent_suggested / max(self.absent, 1)

    @property
    def precision(self) -> float:
        """Of the present cases with any suggestion, the share whose first suggestion is right."""
        return self.first_right / max(self.present_suggested, 1)

    @property
    def first_rank(self) -> float:
        """The issue's first-rank: of ALL present cases, the share whose first suggestion is right (a case with no
        suggestion counts as a miss)."""
        return self.first_right / max(self.present, 1)


def ordered(case: Case, p: Predictor) -> list[Hit]:
    return sorted(case.hits, key=lambda h: -p.key(h))


def suggestions(case: Case, p: Predictor, threshold: float) -> list[Hit]:
    """What run_tests would carry: hits at or above the threshold, best first by the predictor, at most SUGGEST."""
    return [h for h in ordered(case, p) if p.value(h) >= threshold][:SUGGEST]


def outcome(cases: Sequence[Case], p: Predictor, threshold: float, *, lenient: bool = False) -> Outcome:
    """Suggestions over `cases`; `lenient` reads the lenient labels (`relevance_set`) instead of the strict ones."""
    present = [c for c in cases if (c.present_lenient if lenient else c.present)]
    absent = [c for c in cases if not (c.present_lenient if lenient else c.present)]
    shown = [suggestions(c, p, threshold) for c in present]
    return Outcome(
        absent=len(absent),
        absent_suggested=sum(1 for c in absent if suggestions(c, p, threshold)),
        present=len(present),
        present_suggested=sum(1 for s in shown if s),
        first_right=sum(1 for s in shown if s and (s[0].lenient if lenient else s[0].label)),
    )


def choose_threshold(cases: Sequence[Case], p: Predictor, *, lenient: bool = False) -> float:
    """The lowest threshold that keeps at most MAX_ABSENT_RATE of the absent cases with a suggestion, in each kind
    of query alike (error lines, words): `run_tests` cuts error lines at it and the agent's first prompt may cut
    a task in words at it."""
    grid = [round(t, 2) for t in np.arange(0.02, 0.99, 0.01)]
    kinds = [[c for c in cases if c.error_query == kind] for kind in (True, False)]

    def ok(t: float) -> bool:
        return all(outcome(k, p, t, lenient=lenient).absent_rate <= MAX_ABSENT_RATE for k in kinds if k)

    return next((t for t in grid if ok(t)), grid[-1])


def _label(h: Hit, lenient: bool) -> int:
    return h.lenient if lenient else h.label


def brier(hits: Sequence[Hit], value: Callable[[Hit], float], *, lenient: bool = False) -> float:
    return float(np.mean([(min(max(value(h), 0.0), 1.0) - _label(h, lenient)) ** 2 for h in hits])) if hits else 0.0


def reliability(
    hits: Sequence[Hit], value: Callable[[Hit], float], bins: int = 5, *, lenient: bool = False
) -> list[tuple[str, int, float, float]]:
    """(bin, hits, mean predicted, observed rate) for equal-width bins of the predicted probability."""
    out = []
    for i in range(bins):
        lo, hi = i / bins, (i + 1) / bins
        inside = [h for h in hits if lo <= min(max(value(h), 0.0), 1.0) < hi or (i == bins - 1 and value(h) >= 1)]
        if inside:
            mean = float(np.mean([min(max(value(h), 0.0), 1.0) for h in inside]))
            out.append((f"{lo:.1f}-{hi:.1f}", len(inside), mean, float(np.mean([_label(h, lenient) for h in inside]))))
    return out
