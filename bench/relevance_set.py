"""The labelled set of the relevance benchmark (`bench.relevance`): queries, lessons, banks and labelled hits.

Queries: the retrieval eval set (`bench/retrieval/evalset.jsonl`: real tracebacks and descriptions, each with the
starter skill that is its lesson) and `bench/data/relevance/queries.jsonl` (the demo's failures, failures whose
lesson is one of the distilled lessons of `lessons.jsonl`, failures whose lesson is in no bank). Banks: two halves
of the starter pack and the lessons (a query's lesson is in one of them) and the whole corpus, each with every
near-miss distractor. A hit is relevant when it is the query's lesson (or one of its `also` skills): the strict label.

The lenient label, a rule fixed before measuring and applied to every query and split alike: a hit also counts as
relevant when one of the query's error lines fits the message template of the skill's pattern and the skill names
the query's exception type (`relevance.template_fits` and `names_type`, the matcher the `signature` feature uses):
a near-duplicate generic lesson (`AttributeError: '<type>' object has no attribute '<name>'` for a `'dict' object
has no attribute 'iteritems'` failure) would also help. The labels are never chosen by looking at errors.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.retrieval.evaluate import EvalQuery, eval_corpus, load_evalset
from skills_store.bank import SkillBank
from skills_store.models import Skill
from skills_store.protocols import Embedder
from skills_store.search.fusion import SearchMode
from skills_store.search.query import analyze
from skills_store.search.relevance import Signature, names_type, template_fits

ROOT = Path(__file__).resolve().parents[1]
QUERIES_PATH = ROOT / "bench" / "data" / "relevance" / "queries.jsonl"
LESSONS_PATH = ROOT / "bench" / "data" / "relevance" / "lessons.jsonl"
DEPTH = 5
"""Hits per search (search_skills' default k)."""
HELD_OUT = 4
"""Lessons with hash % 10 below this are held out."""


@dataclass(frozen=True)
class Hit:
    skill_id: str
    label: int
    score: float
    features: dict[str, float]
    confidence: float = 0.5
    lenient: int = 0
    """The lenient label (module doc); at least `label`."""


@dataclass(frozen=True)
class Case:
    """One query against one bank: its hits, best first, and whether its lesson is in that bank."""

    query: EvalQuery
    mode: SearchMode
    present: bool
    hits: tuple[Hit, ...]
    present_lenient: bool = False
    """A skill relevant by the lenient label is in the bank."""

    @property
    def error_query(self) -> bool:
        """The query has error lines: what `run_tests`' suggestions are searched with (a query in words is not)."""
        return self.query.kind == "traceback"

    @property
    def held_out(self) -> bool:
        return held_out(self.query)


def group_of(q: EvalQuery) -> str:
    return q.expected or q.id


def held_out(q: EvalQuery) -> bool:
    return int(hashlib.sha1(group_of(q).encode()).hexdigest(), 16) % 10 < HELD_OUT


def load_queries() -> list[EvalQuery]:
    return [*load_evalset(), *(q for q, _ in _extra_queries())]


@functools.cache
def _extra_queries() -> list[tuple[EvalQuery, frozenset[str]]]:
    """The queries of `queries.jsonl` and the skills relevant to each besides its lesson (`also`)."""
    out = []
    for line in QUERIES_PATH.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            also = frozenset(raw.pop("also", []))
            out.append((EvalQuery(**{**raw, "expected": raw["expected"] or ""}), also))
    return out


def relevant_to(q: EvalQuery) -> frozenset[str]:
    also = {e.id: a for e, a in _extra_queries()}.get(q.id, frozenset())
    return frozenset({q.expected, *also} - {""})


def error_line_form(q: EvalQuery) -> EvalQuery:
    """`q` as `run_tests` would search it: its first error line alone (`failure_queries` sends a failing test's
    `Type: message` line, not the traceback); a query without one is left as it is."""
    lines = Signature.of(analyze(q.query)).lines
    return dataclasses.replace(q, query=lines[0]) if lines else q


def lenient_relevant(q: EvalQuery, corpus: Sequence[Skill]) -> frozenset[str]:
    """The skills relevant to `q` by the lenient label: the strict ones, and those whose pattern's template its
    error lines fit and that name its exception type (none for a query in words)."""
    sig = Signature.of(analyze(q.query))
    fitting = {s.skill_id for s in corpus if sig.lines and template_fits(sig, s) and names_type(sig, s)}
    return relevant_to(q) | fitting


def labelled_corpus() -> list[Skill]:
    """The eval corpus (starter pack, distractors) plus the distilled lessons of `lessons.jsonl`."""
    lessons = [Skill.model_validate_json(line) for line in LESSONS_PATH.read_text(encoding="utf-8").splitlines()]
    return [*eval_corpus(), *lessons]


def collect(
    embedder: Embedder, queries: Sequence[EvalQuery], work: Path, modes: Sequence[SearchMode] = ("hybrid", "keyword")
) -> list[Case]:
    """Every query against both half-banks and the whole corpus, in hybrid and keyword mode."""
    corpus = labelled_corpus()
    starters = [s for s in corpus if not s.skill_id.startswith("distractor-")]
    others = [s for s in corpus if s.skill_id.startswith("distractor-")]
    others_ids = {s.skill_id for s in others}
    lenients = {q.id: lenient_relevant(q, corpus) for q in queries}
    cases: list[Case] = []
    for half in (0, 1, None):
        held = [
            s for s in starters if half is None or int(hashlib.sha1(s.skill_id.encode()).hexdigest(), 16) % 2 == half
        ]
        ids = {s.skill_id for s in held}
        with SkillBank.open(work / f"bank{half}", embedder) as bank:
            bank.upsert([*held, *others])
            for mode in modes:
                for q in queries:
                    relevant, lenient = relevant_to(q), lenients[q.id]
                    found = bank.search(q.query, DEPTH, mode=mode, count_use=False)  # type: ignore[arg-type]
                    hits = tuple(
                        Hit(
                            h.skill.skill_id,
                            int(h.skill.skill_id in relevant),
                            h.score,
                            h.features,
                            h.skill.confidence,
                            int(h.skill.skill_id in lenient),
                        )
                        for h in found
                    )
                    present, present_lenient = bool(relevant & ids), bool(lenient & (ids | others_ids))
                    cases.append(Case(q, mode, present, hits, present_lenient))  # type: ignore[arg-type]
    return cases
