"""Calibrated relevance: how likely a search hit applies to the query, in [0, 1].

The fused score ranks well but means little on its own: every query gets a first hit scored near 1, relevant or
not (a `KeyError` failure's third hit, "Calling something that is not a function", scored 0.32). Distracting
memory items make agents worse than no memory at all, so suggestions need a probability they can be cut on.

A small logistic model turns what agrees between the query and the skill into that probability:

- signature agreement: the query's exception type named by the skill's pattern (or another type named there), the
  share of the pattern's literal message words found in the query's error lines, the query's quoted names
  (`'collections'`, `'iteritems'`) found in the skill;
- the vector side: cosine similarity and its gap to the best hit of the query;
- the keyword side: BM25, and the reciprocal ranks on each side.

Its coefficients (`relevance_coefs`) are fitted by `python -m bench.relevance --fit` on a labelled set of real
tracebacks and descriptions against the starter pack and near-miss distractors, including queries whose lesson
is not in the bank. The keyword-only variant serves the Claude Code hook, which loads no model. Pure Python (no
numpy): the hook imports this.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from skills_store.errors import ConfigError
from skills_store.models import Skill
from skills_store.search.query import QueryParts, tokens

_EXC_TYPE = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt|Iteration))\b")
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>")
_ALTERNATIVES = re.compile(r"\s+/\s+|\s+--\s+|\s+\((?:or|and|in|Did)\b")
_BARE_ASSERT = re.compile(r"(?:^|: )(?:E\s+)?(assert\s.{1,300})$", re.MULTILINE)
_QUOTED = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"")

HYBRID_FEATURES = (
    "error_query",
    "signature",
    "type_match",
    "type_other",
    "template",
    "quoted",
    "cosine",
    "cosine_margin",
    "type_cosine",
    "bm25",
    "bm25_margin",
    "vector_rr",
    "keyword_rr",
    "fused",
)
KEYWORD_FEATURES = (
    "error_query",
    "signature",
    "type_match",
    "type_other",
    "template",
    "quoted",
    "bm25",
    "bm25_margin",
    "keyword_rr",
)


@dataclass(frozen=True)
class RelevanceModel:
    """A logistic model over named features: P(relevant) = sigmoid(bias + sum(w_i * x_i))."""

    weights: Mapping[str, float]
    bias: float

    def predict(self, features: Mapping[str, float]) -> float:
        z = self.bias + sum(w * features.get(name, 0.0) for name, w in self.weights.items())
        if z < -40:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))


@dataclass(frozen=True)
class Signature:
    """What of a query a skill's pattern is compared with: its error type, message words and quoted names."""

    error_type: str | None
    words: frozenset[str]
    quoted: tuple[str, ...]
    lines: tuple[str, ...] = ()
    """The error lines themselves (`Type: message`), for the template match."""

    @classmethod
    def of(cls, parts: QueryParts) -> Signature:
        lines, error_type = list(parts.error_lines), parts.error_type
        if error_type in (None, "AssertionError"):
            # pytest reports a failed `assert` bare (`test_x: assert -1 == 5`, `E  assert -1 == 5`, then a lone
            # `AssertionError`); the distiller reads it as `AssertionError: assert ...`, and so does this.
            asserts = [f"AssertionError: {m.group(1).strip()}" for m in _BARE_ASSERT.finditer(parts.text)]
            lines = list(dict.fromkeys([*lines, *asserts]))[:4]
            error_type = "AssertionError" if lines else None
        errors = " ".join(lines)
        quoted = tuple(dict.fromkeys(q.lower() for pair in _QUOTED.findall(errors) for q in pair if q.strip()))
        return cls(error_type, frozenset(tokens(errors)), quoted[:8], tuple(lines))


def signature_features(sig: Signature, skill: Skill) -> dict[str, float]:
    """Agreement of the query's error signature with the skill's pattern (all 0 for a query in words)."""
    if sig.error_type is None:
        return dict.fromkeys(("error_query", "signature", "type_match", "type_other", "template", "quoted"), 0.0)
    types = set(_EXC_TYPE.findall(skill.pattern)) | set(_EXC_TYPE.findall(skill.title))
    match = sig.error_type in types
    literal = tokens(_PLACEHOLDER.sub(" ", skill.pattern))[:24]
    template = sum(1 for w in literal if w in sig.words) / len(literal) if literal else 0.0
    document = skill.document().lower()
    quoted = sum(1 for q in sig.quoted if q in document) / len(sig.quoted) if sig.quoted else 0.0
    templates = _templates(skill.pattern)
    return {
        "error_query": 1.0,
        "signature": float(any(t.search(line) for t in templates for line in sig.lines)),
        "type_match": float(match),
        "type_other": float(bool(types) and not match),
        "template": template,
        "quoted": quoted,
    }


@functools.lru_cache(maxsize=4096)
def _templates(pattern: str) -> tuple[re.Pattern[str], ...]:
    """The message templates of a pattern's first line as regexes, placeholders matching any text: `KeyError:
    '<name>'` matches `KeyError: 'qty'`. Alternatives (`A / B`, `A -- B`) are templates of their own; only those
    of the `Type: message` shape count."""
    first = pattern.strip().splitlines()[0] if pattern.strip() else ""
    out = []
    for alt in _ALTERNATIVES.split(first):
        alt = alt.strip()
        if ":" not in alt or not _EXC_TYPE.search(alt.split(":", 1)[0]):
            continue
        pieces = _PLACEHOLDER.split(alt)
        out.append(re.compile(".+?".join(re.escape(p) for p in pieces)))
    return tuple(out)


def hit_features(
    sig: Signature,
    skill: Skill,
    *,
    cosine: float | None,
    other_cosine: float | None,
    bm25: float | None,
    other_bm25: float | None,
    ranks: Mapping[str, int],
    fused: float | None,
) -> dict[str, float]:
    """Every feature of one hit; the vector ones are left out when the search had no query vector.

    `other_*` is the best value among the query's other hits: a lesson that stands out from the rest is likelier
    to be the one than the best of an unrelated lot.
    """
    out = signature_features(sig, skill)
    out["bm25"] = _log_bm25(bm25)
    out["bm25_margin"] = out["bm25"] - _log_bm25(other_bm25)
    out["keyword_rr"] = 1.0 / ranks["keyword"] if "keyword" in ranks else 0.0
    if cosine is not None:
        out["cosine"] = cosine
        out["cosine_margin"] = cosine - (other_cosine if other_cosine is not None else 0.0)
        out["type_cosine"] = out["type_match"] * cosine
        out["vector_rr"] = 1.0 / ranks["vector"] if "vector" in ranks else 0.0
        out["fused"] = fused or 0.0
    return out


def _log_bm25(score: float | None) -> float:
    return math.log1p(max(score or 0.0, 0.0))


def hybrid_model() -> RelevanceModel:
    from skills_store.search.relevance_coefs import HYBRID

    return RelevanceModel(HYBRID["weights"], HYBRID["bias"])  # type: ignore[arg-type]


def keyword_model() -> RelevanceModel:
    from skills_store.search.relevance_coefs import KEYWORD

    return RelevanceModel(KEYWORD["weights"], KEYWORD["bias"])  # type: ignore[arg-type]


def default_threshold() -> float:
    """The suggestion threshold chosen on the train split (`SKILLBANK_SUGGEST_THRESHOLD` overrides it)."""
    from skills_store.search.relevance_coefs import THRESHOLD

    return THRESHOLD


def suggest_threshold(env: Mapping[str, str] | None = None) -> float:
    """The threshold suggestions are cut at: `SKILLBANK_SUGGEST_THRESHOLD` of `env` (default: this process's
    environment) when set, else `default_threshold()`.

    For callers without the server's settings (the bundled agent's first prompt, given the server's environment),
    so that what the prompt carries and what `run_tests` suggests are cut at the same relevance.
    """
    raw = (os.environ if env is None else env).get("SKILLBANK_SUGGEST_THRESHOLD", "").strip()
    if not raw:
        return default_threshold()
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"SKILLBANK_SUGGEST_THRESHOLD must be a number in [0, 1], got {raw!r}") from None
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"SKILLBANK_SUGGEST_THRESHOLD must be in [0, 1], got {value}")
    return value
