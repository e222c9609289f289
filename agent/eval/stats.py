"""The statistics of the eval report: Wilson intervals for pass rates, an exact McNemar test for paired outcomes.

Wilson rather than the normal approximation because held-out sets are small (tens of tasks) and rates sit near
0 or 1, where the normal interval leaves [0, 1]. McNemar because both conditions solve the *same* tasks: only the
discordant pairs (solved with skills only, or without only) carry evidence, and the exact binomial form is right
for the handful of them a small suite gives.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a proportion; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


class Paired(BaseModel):
    """Paired outcomes of two conditions on the same (task, attempt) pairs."""

    pairs: int
    both: int
    only_with: int
    """Solved with skills, not without."""
    only_without: int
    neither: int
    p_value: float
    """Two-sided exact McNemar (binomial sign test on the discordant pairs)."""

    @property
    def difference(self) -> float:
        """Pass rate with minus pass rate without, over the pairs."""
        return 0.0 if self.pairs == 0 else (self.only_with - self.only_without) / self.pairs


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact p-value for b vs c discordant pairs (1.0 when there are none)."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(with_skills: dict[str, bool], without: dict[str, bool]) -> Paired:
    """Compare two {pair key: resolved} maps on the keys they share."""
    keys = sorted(set(with_skills) & set(without))
    both = sum(with_skills[k] and without[k] for k in keys)
    only_with = sum(with_skills[k] and not without[k] for k in keys)
    only_without = sum(without[k] and not with_skills[k] for k in keys)
    return Paired(
        pairs=len(keys),
        both=both,
        only_with=only_with,
        only_without=only_without,
        neither=len(keys) - both - only_with - only_without,
        p_value=mcnemar_exact(only_with, only_without),
    )
