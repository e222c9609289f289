"""Fusing the vector and keyword rankings (reciprocal rank fusion), and a gentle confidence prior.

RRF (Cormack et al. 2009) adds `w / (k + rank)` from each ranking a document appears in. It needs no score
calibration between cosine similarity and BM25, which live on unrelated scales, and rewards documents that
both sides find. Scores are normalised so that 1.0 means "ranked first by every side".

The weights depend on the query. Error output (a traceback, a pytest failure) is full of exact tokens
(`ModuleNotFoundError`, `'collections'`) that BM25 matches and vectors blur, so the keyword side leads there;
a description in words ("my async tests never run") shares few tokens with the skill, so the vector side leads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from skills_store.models import Skill

SearchMode = Literal["hybrid", "vector", "keyword"]
Ranked = list[tuple[str, float, dict[str, int]]]


@dataclass
class ScoredSkill:
    """A search hit: the skill, its score and where each side ranked it."""

    skill: Skill
    score: float
    """Hybrid: fused score in [0, 1] (1 = ranked first by both sides). Vector: cosine. Keyword: BM25."""
    ranks: dict[str, int] = field(default_factory=dict)
    """1-based rank of the skill on each side that found it."""
    relevance: float | None = None
    """Calibrated probability in [0, 1] that the skill applies (`search.relevance`); None where not computed."""
    features: dict[str, float] = field(default_factory=dict)
    """What `relevance` was computed from (kept for the benchmark that fits the model)."""


@dataclass
class FusionConfig:
    rrf_k: int = 60
    """The RRF constant: larger flattens the difference between ranks."""
    error_weights: tuple[float, float] = (0.5, 1.0)
    """(vector, keyword) weights for queries that contain error output."""
    text_weights: tuple[float, float] = (1.0, 0.5)
    """(vector, keyword) weights for queries in words."""
    confidence_weight: float = 0.2
    """How much a skill's confidence scales its hybrid score: score * (1 - w + w * confidence)."""

    def prior(self, hit: ScoredSkill) -> float:
        return 1.0 - self.confidence_weight + self.confidence_weight * hit.skill.confidence

    def rerank_by_confidence(self, hits: list[ScoredSkill]) -> list[ScoredSkill]:
        """Scale each score by the confidence prior, then order: by relevance times the same prior where every hit
        has one (how likely the skill applies ranks better than the fused score: it knows the signature), else by
        the score; the score breaks ties."""
        if self.confidence_weight > 0:
            for hit in hits:
                hit.score *= self.prior(hit)
        if hits and all(h.relevance is not None for h in hits):
            return sorted(hits, key=lambda h: (-(h.relevance or 0.0) * self.prior(h), -h.score))
        return sorted(hits, key=lambda h: -h.score)


def fuse(
    vector: list[tuple[str, float]],
    keyword: list[tuple[str, float]],
    mode: SearchMode,
    config: FusionConfig,
    *,
    error_query: bool = False,
) -> Ranked:
    """Best-first (id, score, ranks) from the two rankings, each already best-first."""
    if mode == "vector":
        return [(sid, score, {"vector": i + 1}) for i, (sid, score) in enumerate(vector)]
    if mode == "keyword":
        return [(sid, score, {"keyword": i + 1}) for i, (sid, score) in enumerate(keyword)]
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    vector_weight, keyword_weight = config.error_weights if error_query else config.text_weights
    for side, hits, weight in (("vector", vector, vector_weight), ("keyword", keyword, keyword_weight)):
        for i, (sid, _) in enumerate(hits):
            scores[sid] = scores.get(sid, 0.0) + weight / (config.rrf_k + i + 1)
            ranks.setdefault(sid, {})[side] = i + 1
    best = (vector_weight + keyword_weight) / (config.rrf_k + 1)
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(sid, score / best, ranks[sid]) for sid, score in ordered]
