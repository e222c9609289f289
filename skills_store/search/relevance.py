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
_TYPE_HEAD = re.compile(
    r"((?:[A-Za-z_]\w*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt|Iteration)):\s"
)
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>")
_WILDCARD = re.compile(r"(<[^<>\n]{1,40}>|\.\.\.|\b[A-Z]\b)")
"""What a pattern's message template leaves open: `<name>`, an ellipsis, a lone capital (`takes N arguments`)."""
_CHOICES = re.compile(r"<([\w.]+(?:\|[\w.]+)+)>")
"""A placeholder that lists what it stands for, `<json|random|logging>`: one of those, not any text."""
_NOTE = re.compile(r"\s+\([^()]*\)")
"""A parenthetical note of a pattern (`(most likely due to a circular import)`, `(also Sequence, ...)`)."""
_ALTERNATIVES = re.compile(r"\s+/\s+|\s+--\s+|;\s+")
_LEAD = re.compile(r"^(?:or|and|e\.g\.)\b:?\s*", re.IGNORECASE)
_BARE_ASSERT = re.compile(r"(?:^|: )(?:E\s+)?(assert\s.{1,300})$", re.MULTILINE)
_QUOTED = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"")

RELEVANCE_DEPTH = 5
"""Hits a search computes relevance over (and orders by it) when asked for fewer: the margins compare each hit
with the others, so a hit's relevance must not depend on `k`. The fitted set has this many hits a query."""

HYBRID_FEATURES = (
    "error_query",
    "signature",
    "type_match",
    "type_other",
    "template",
    "quoted",
    "rule",
    "cosine",
    "cosine_margin",
    "type_cosine",
    "bm25",
    "bm25_margin",
    "vector_rr",
    "keyword_rr",
    "fused",
)
VECTOR_FEATURES = frozenset({"cosine", "cosine_margin", "type_cosine", "vector_rr", "fused"})
"""What only a search with the vector side knows; the keyword-only model (the Claude Code hook) has the rest."""
KEYWORD_FEATURES = tuple(name for name in HYBRID_FEATURES if name not in VECTOR_FEATURES)


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
    """What of a query a skill's pattern is compared with: its error types, message words, quoted names and the
    source line that raised."""

    error_type: str | None
    words: frozenset[str]
    quoted: tuple[str, ...]
    lines: tuple[str, ...] = ()
    """The error lines themselves (`Type: message`), for the template match."""
    types: frozenset[str] = frozenset()
    """The exception types of every error line (a `RuntimeWarning` printed before the `RuntimeError` raised)."""
    names: frozenset[str] = frozenset()
    """Identifier tokens of the error lines and of the source line that raised, for the skill's edit rule."""

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
        types = frozenset(line.split(":", 1)[0].rsplit(".", 1)[-1].strip() for line in lines)
        names = frozenset(tokens(f"{errors} {parts.code_line or ''}"))
        return cls(error_type, frozenset(tokens(errors)), quoted[:8], tuple(lines), types, names)


_SIGNATURE_FEATURES = ("error_query", "signature", "type_match", "type_other", "template", "quoted", "rule")


def signature_features(sig: Signature, skill: Skill) -> dict[str, float]:
    """Agreement of the query's error signature with the skill's pattern (all 0 for a query in words)."""
    if sig.error_type is None:
        return dict.fromkeys(_SIGNATURE_FEATURES, 0.0)
    types = set(_EXC_TYPE.findall(skill.pattern)) | set(_EXC_TYPE.findall(skill.title))
    match = names_type(sig, skill)
    literal = tokens(_PLACEHOLDER.sub(" ", skill.pattern))[:24]
    template = sum(1 for w in literal if w in sig.words) / len(literal) if literal else 0.0
    document = skill.document().lower()
    quoted = sum(1 for q in sig.quoted if q in document) / len(sig.quoted) if sig.quoted else 0.0
    return {
        "error_query": 1.0,
        "signature": float(template_fits(sig, skill)),
        "type_match": float(match),
        "type_other": float(bool(types) and not match),
        "template": template,
        "quoted": quoted,
        "rule": rule_agreement(sig, skill),
    }


def template_fits(sig: Signature, skill: Skill) -> bool:
    """One of the query's error lines fits one of the message templates of the skill's pattern (`fits`)."""
    return any(fits(t, line) for t in _templates(skill.pattern) for line in sig.lines)


def names_type(sig: Signature, skill: Skill) -> bool:
    """The skill's pattern or title names one of the query's exception types."""
    return bool(sig.types & (set(_EXC_TYPE.findall(skill.pattern)) | set(_EXC_TYPE.findall(skill.title))))


def rule_agreement(sig: Signature, skill: Skill) -> float:
    """The share of the names the skill's edit rule rewrites (its leading `before`, placeholders left out:
    `time.clock()` -> `time`, `clock`; `<mapping>.iteritems()` -> `iteritems`) that the failure names, in its error
    line or the source line that raised; 0 for a skill without a rule."""
    before = next((r.before for r in skill.rule if r.before.strip()), "")
    names = tokens(_PLACEHOLDER.sub(" ", before))[:8]
    return sum(1 for n in names if n in sig.names) / len(names) if names else 0.0


def fits(template: tuple[re.Pattern[str], str], line: str) -> bool:
    """The error line fits the template: the whole template matches in it (placeholders as any text), or the
    line's message is the template's message cut at a word (`SyntaxError: invalid syntax` against `SyntaxError:
    invalid syntax at a walrus ...`), at least two words of it. A line with no quote mark at all (a message typed
    by hand) fits a template whose quote marks are left out (`KeyError: user_id` fits `KeyError: '<name>'`)."""
    regex, literal = template
    if regex.search(line):
        return True
    if not _QUOTE_MARK.search(line) and _QUOTE_MARK.search(literal) and _unquoted(regex.pattern).search(line):
        return True  # typed by hand with no quotes at all (`No module named yaml`): the template's quotes optional
    head, _, message = line.partition(": ")
    t_head, _, t_message = literal.partition(": ")
    message = message.strip()
    return (
        head.rsplit(".", 1)[-1] == t_head.rsplit(".", 1)[-1]
        and len(message.split()) >= 2
        and t_message.startswith(message)
        and t_message[len(message) : len(message) + 1] in ("", " ")
    )


_QUOTE_MARK = re.compile(r"""['"]""")


@functools.lru_cache(maxsize=4096)
def _unquoted(pattern: str) -> re.Pattern[str]:
    """A template's regex with its quote marks optional."""
    return re.compile(_QUOTE_MARK.sub(r"""['"]?""", pattern))


@functools.lru_cache(maxsize=4096)
def _templates(pattern: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """The message templates of a pattern's first line, as (regex, text): placeholders (`<name>`, `...`, a lone
    capital) match any text, so `KeyError: '<name>'` fits `KeyError: 'qty'`, and a parenthetical note may be there
    or not, whatever it says. Alternatives (`A / B`, `A -- or B`) are templates of their own, starting at their
    exception type; one without a type takes the previous one's (`TypeError: <f>() takes N ... / <f>() missing 1
    ...`), a bare `assert ...` is an `AssertionError`."""
    first = pattern.strip().splitlines()[0] if pattern.strip() else ""
    notes: list[str] = []

    def note(m: re.Match[str]) -> str:
        notes.append(m.group(0))
        return f"\x00{len(notes) - 1}\x00"

    first = _NOTE.sub(note, first)
    out, head = [], None
    for alt in _ALTERNATIVES.split(first):
        alt = _LEAD.sub("", alt.strip())
        found = _TYPE_HEAD.search(alt)
        if found:
            head, alt = found.group(1), alt[found.start() :]
        elif alt.startswith("assert "):
            alt = f"AssertionError: {alt}"
        elif head is not None and alt:
            alt = f"{head}: {alt}"
        else:
            continue
        regex = "".join(
            r"(?:\s+\(.*?\))?" if i % 2 else _piece_regex(piece)
            for i, piece in enumerate(re.split(r"\x00(\d+)\x00", alt))
        )
        text = re.sub(r"\x00(\d+)\x00", lambda m: notes[int(m.group(1))], alt)
        out.append((re.compile(regex), text))
    return tuple(out)


def _piece_regex(text: str) -> str:
    """Literal text escaped, placeholders as any text (lazily), a placeholder listing choices as one of them."""
    out = []
    for i, part in enumerate(_WILDCARD.split(text)):
        if i % 2 == 0:
            out.append(re.escape(part))
        elif choices := _CHOICES.fullmatch(part):
            out.append("(?:" + "|".join(re.escape(c) for c in choices.group(1).split("|")) + ")")
        else:
            out.append(".+?")
    return "".join(out)


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
