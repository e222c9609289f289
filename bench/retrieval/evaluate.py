"""Retrieval metrics over the eval set: recall@1, recall@3 and MRR per search mode and per query kind.

Used by the benchmark (`python -m bench.retrieval`) and by the floor test in
`tests/skills_store/test_retrieval_floor.py`. The bank under test holds the starter pack plus near-miss
distractors (`distractors.jsonl`) that are never the expected answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skills_store.bank import SkillBank
from skills_store.models import Skill
from skills_store.protocols import Embedder
from skills_store.search.fusion import SearchMode
from skills_store.starter import load_starter_pack

HERE = Path(__file__).resolve().parent
EVALSET_PATH = HERE / "evalset.jsonl"
DISTRACTORS_PATH = HERE / "distractors.jsonl"
MODES: tuple[SearchMode, ...] = ("hybrid", "vector", "keyword")
KINDS: tuple[str, ...] = ("traceback", "description")
DEPTH = 10
"""Results fetched per query; an expected skill ranked below this counts as not found (reciprocal rank 0)."""

QueryKind = Literal["traceback", "description"]


@dataclass(frozen=True)
class EvalQuery:
    id: str
    query: str
    kind: QueryKind
    expected: str
    snippet: str | None = None


@dataclass(frozen=True)
class QueryResult:
    """The ranked skill ids one mode returned for one query."""

    query: EvalQuery
    mode: SearchMode
    ranked: tuple[str, ...]

    @property
    def rank(self) -> int | None:
        """1-based rank of the expected skill, or None when it is not in the results."""
        try:
            return self.ranked.index(self.query.expected) + 1
        except ValueError:
            return None


@dataclass(frozen=True)
class Metrics:
    n: int
    recall_at_1: float
    recall_at_3: float
    mrr: float


def compute_metrics(ranks: Iterable[int | None]) -> Metrics:
    """Recall@1, recall@3 and mean reciprocal rank from 1-based ranks (None = not retrieved)."""
    values = list(ranks)
    if not values:
        raise ValueError("compute_metrics needs at least one rank")
    if any(r is not None and r < 1 for r in values):
        raise ValueError("ranks are 1-based")
    n = len(values)
    return Metrics(
        n=n,
        recall_at_1=sum(1 for r in values if r == 1) / n,
        recall_at_3=sum(1 for r in values if r is not None and r <= 3) / n,
        mrr=sum(1.0 / r for r in values if r is not None) / n,
    )


def load_evalset(path: Path = EVALSET_PATH) -> list[EvalQuery]:
    queries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            queries.append(EvalQuery(**json.loads(line)))
    return queries


def load_distractors(path: Path = DISTRACTORS_PATH) -> list[Skill]:
    return [Skill.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


#: Every eval skill gets this confidence, so the ranking's confidence prior cannot tell starter skills from
#: distractors (the distractors were written with lower confidences): the eval measures relevance alone.
NEUTRAL_CONFIDENCE = 0.75


def eval_corpus() -> list[Skill]:
    """The skills loaded for the eval: the starter pack and the distractors, with one shared confidence."""
    skills = [*load_starter_pack(), *load_distractors()]
    return [s.model_copy(update={"confidence": NEUTRAL_CONFIDENCE, "prior": NEUTRAL_CONFIDENCE}) for s in skills]


def build_bank(home: Path, embedder: Embedder) -> SkillBank:
    """A fresh bank under `home` holding the eval corpus."""
    bank = SkillBank.open(home, embedder)
    bank.upsert(eval_corpus())
    return bank


def run_queries(
    bank: SkillBank, queries: Sequence[EvalQuery], modes: Sequence[SearchMode] = MODES, depth: int = DEPTH
) -> list[QueryResult]:
    results = []
    for mode in modes:
        for q in queries:
            hits = bank.search(q.query, k=depth, mode=mode, count_use=False)
            results.append(QueryResult(q, mode, tuple(h.skill.skill_id for h in hits)))
    return results


def summarize(results: Sequence[QueryResult]) -> dict[tuple[str, str], Metrics]:
    """Metrics keyed by (mode, kind), where kind is 'traceback', 'description' or 'all'."""
    table: dict[tuple[str, str], Metrics] = {}
    modes = dict.fromkeys(r.mode for r in results)
    for mode in modes:
        for kind in ("all", *KINDS):
            ranks = [r.rank for r in results if r.mode == mode and kind in ("all", r.query.kind)]
            if ranks:
                table[(mode, kind)] = compute_metrics(ranks)
    return table


def hybrid_wins(table: dict[tuple[str, str], Metrics]) -> bool:
    """Hybrid MRR over all queries is strictly above both single modes."""
    hybrid = table[("hybrid", "all")].mrr
    return hybrid > table[("vector", "all")].mrr and hybrid > table[("keyword", "all")].mrr
