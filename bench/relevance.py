"""Calibrated relevance: fit the model and measure suggestions on a held-out split. `python -m bench.relevance`.

The labelled set (`bench.relevance_set`): real tracebacks and descriptions, the demo's failures and failures of
distilled lessons, each against banks that hold its lesson and banks that do not.

Queries are split by lesson (40% held out, by a hash of the lesson id): no held-out lesson is seen in fitting.
`--fit` fits the logistic models (hybrid, and keyword-only for the Claude Code hook) on the train split, picks the
suggestion threshold on its error-line queries (what `run_tests` suggests from), and writes
`skills_store/search/relevance_coefs.py`; every run then reports train and held-out figures
(`bench.relevance_report`) to `docs/benchmarks/relevance.md`. Exits 1 when the held-out error-line queries miss a
target of the issue: at most 10% of the cases whose lesson is absent get a suggestion, and the first suggestion is
the lesson in at least 90% of ALL the cases whose lesson is present (first-rank; a case with no suggestion is a
miss), strict labels.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench.common import machine_line
from bench.relevance_eval import MAX_ABSENT_RATE, SUGGEST, Predictor, choose_threshold, relevance_predictor
from bench.relevance_report import tables
from bench.relevance_set import DEPTH, ROOT, Case, Hit, collect, error_line_form, labelled_corpus, load_queries
from skills_store.bank import SkillBank
from skills_store.protocols import Embedder
from skills_store.search.relevance import HYBRID_FEATURES, KEYWORD_FEATURES, RelevanceModel
from skills_store.starter import load_starter_pack

LENIENT = True
"""The shipped models are fitted, and the threshold chosen, on the lenient labels (`relevance_set`): a skill whose
template the failure fits and that names its type applies. The strict figures are reported beside them."""
COEFS_PATH = ROOT / "skills_store" / "search" / "relevance_coefs.py"
REPORT_PATH = ROOT / "docs" / "benchmarks" / "relevance.md"


def matrix(hits: Sequence[Hit], names: Sequence[str]) -> np.ndarray:
    return np.array([[h.features.get(n, 0.0) for n in names] for h in hits], dtype=float).reshape(len(hits), len(names))


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> tuple[np.ndarray, float]:
    """Newton's method on the L2-penalised log loss (the bias unpenalised)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    penalty = np.full(xb.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + penalty * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def model_for(cases: Sequence[Case], names: Sequence[str], *, lenient: bool = LENIENT) -> RelevanceModel:
    hits = [h for c in cases for h in c.hits]
    y = np.array([h.lenient if lenient else h.label for h in hits], dtype=float)
    w, b = fit_logistic(matrix(hits, names), y)
    return RelevanceModel({n: round(float(v), 4) for n, v in zip(names, w, strict=True)}, round(b, 4))


def write_coefs(hybrid: RelevanceModel, keyword: RelevanceModel, threshold: float) -> None:
    def block(m: RelevanceModel) -> str:
        weights = ",\n".join(f'        "{n}": {w}' for n, w in m.weights.items())  # ruff format's quotes
        return f'{{\n    "weights": {{\n{weights},\n    }},\n    "bias": {m.bias},\n}}'

    COEFS_PATH.write_text(
        '"""Fitted relevance coefficients: written by `python -m bench.relevance --fit` (do not edit by hand).\n\n'
        "See `skills_store.search.relevance` for the features and docs/benchmarks/relevance.md for the figures.\n"
        '"""\n\n'
        f"HYBRID: dict[str, object] = {block(hybrid)}\n\n"
        f"KEYWORD: dict[str, object] = {block(keyword)}\n\n"
        f"THRESHOLD = {threshold}\n"
        '"""Suggestion threshold on the relevance (`SKILLBANK_SUGGEST_THRESHOLD`), chosen on the train split."""\n',
        encoding="utf-8",
    )


METHOD = f"""## Method

- Features of a hit (`skills_store/search/relevance.py`): the query's error line fits a message template of the
  pattern (placeholders `<name>`, `...` and a lone capital as wildcards, parenthetical notes optional, alternatives
  `A / B` and `A -- or B` each a template from its exception type on, one without a type taking the previous one's,
  or the line being the template cut at a word, or a line typed with no quote mark at all fitting it with its quotes
  left out), one of its exception types is named by the pattern (or another
  type is), the share of the pattern's literal words in the error lines, the query's quoted names found in the
  skill, the share of the names the skill's edit rule rewrites (its `before` side) that the failure names, cosine
  similarity and its margin over the query's other hits, BM25 and its margin, the reciprocal rank on each side, the
  fused score. The keyword-only model (the Claude Code hook) has the signature and keyword features only.
- Logistic regression (Newton's method, L2 1.0) on the train split's hits, lenient labels (`LENIENT`; the same
  model fitted on the strict labels: see "Strict or lenient" below); the coefficients are written to
  `skills_store/search/relevance_coefs.py` by `--fit`.
- Hits are ordered by relevance times the confidence prior (`search.engine`, `SkillBank.suggest_for_failures`);
  relevance is computed over the first 5 fused hits whatever `k`, so it does not depend on `k`.
- The threshold is the lowest that keeps at most {MAX_ABSENT_RATE:.0%} of the train split's absent-lesson
  cases with any suggestion (2 points under the 10% target) among the error-line queries and among the queries in
  words alike (the agent's first prompt cuts a task in words at it too), lenient labels; the held-out figures never
  took part in fitting or choosing.
- The raw fused score is no probability: nearly every hit scores 0.8-1.0 whether it applies or not.
"""


def why(f: dict[str, float]) -> str:
    """The discussion under the figures: the labels, what still misses, what was tried."""
    return f"""## Strict or lenient

The strict label counts only the query's own lesson as right, so a near-duplicate that applies counts as noise:
`AttributeError: 'dict' object has no attribute 'iteritems'`, its lesson held out of the bank, suggested the
starter pack's generic `AttributeError: '<type>' object has no attribute '<name>'`. The lenient label is the rule
the task named before any lenient figure was measured, applied mechanically to every query and split: a skill whose
pattern's template the failure's error line fits and that names its exception type applies too. Its caveat: the
rule uses the same template matcher as the `signature` feature, so a model fitted on it learns to trust that
feature, and the lenient figures reward exactly that; the strict figures are there to show the cost. Fitted on the
strict labels instead (same features, same threshold rule: the row "fitted on the strict labels instead"), the
strict first-rank falls to {f["first held out other"]:.2f} held out ({f["first train other"]:.2f} on train) while
the strict absent rate is {f["absent held out other"]:.2f} ({f["absent train other"]:.2f}). What the lenient
label lets through, held out: the generic attribute skill for `'NoneType' object has no attribute 'group'` and
`'str' object has no attribute 'decode'`, and a near-miss distractor (a property setter that recurses) for a
`RecursionError` without a base case, whose template it fits: the last is wrong advice that the rule counts as
right.

## What still misses, and why

- Strict absent, held out, {f["absent held out"]:.2f}: the suggestions above are all look-alikes whose template
  fits (the lenient absent rate is {f["lenient absent held out"]:.2f}); nothing in the features tells a generic
  lesson that applies from a near-miss that does not, since both fit the same message.
- Strict first-rank, held out, {f["first held out"]:.2f} (lenient {f["lenient first held out"]:.2f}): the misses
  are a pytest assertion diff whose pattern is no template of its error line (`... with 'Differing items:'`), a
  `src/` layout `ModuleNotFoundError` where the generic `No module named '<module>'` skill ranks first (both fit),
  the demo's `KeyError: 'price'` against its learned lesson, just under the threshold, and
  `subprocess.TimeoutExpired`, which the error-line parser (`sandbox.errorlines`) does not read as an exception
  line, so the query is taken as words. The ceiling without a threshold is {f["ceiling held out"]:.2f} on the
  held-out error-line queries ({f["ceiling train"]:.2f} on train).
- Queries in words: the threshold keeps their absent rate under the target too, so they rarely get a suggestion
  (first-rank 0.1-0.3 in the table); `search_skills` ranks them with no threshold, and ordering by relevance leaves
  their first hit as it was (no signature to agree with).
- The split is small: 33 held-out absent error-line cases, 3 points each.

## Features tried

- The edit rule's `before` names found in the failure (`rule`): kept in the model, but its weight is near zero
  here (few lessons with rules in the set; the lesson's own pattern already fits); figures with and without it
  are the same on both splits.
- Earlier (kept out): the abstracted signature of the query's error line (`skills_store.distill.signature`)
  equal to the pattern's, rank 1 on both sides, cosine/margin interactions for queries in words. Tried now on the
  train split (strict fit, the threshold on error lines alone): the template fit times the quoted-name share, and
  times the cosine (no train gain); L2 0.3 and 3.0 (train first-rank 0.87 / 0.76 against 0.86 at 1.0); the share
  of the pattern's literal words found anywhere in the query rather than in its error lines (train figures
  unchanged, lenient fit too).
"""


def demo_check(embedder: Embedder, hybrid: Predictor, threshold: float, work: Path) -> list[str]:
    """The demo's second session: its failures against the starter pack and the lesson its first session learned
    (`lesson-csv-header-keys`); each hit's relevance, and whether it is suggested, in the order by relevance."""
    out = []
    learned = [s for s in labelled_corpus() if s.skill_id == "lesson-csv-header-keys"]
    with SkillBank.open(work / "demo", embedder) as bank:
        bank.upsert([*load_starter_pack(), *learned])
        for query in ("KeyError: 'price'", "KeyError: 'qty'"):
            found = [
                (h, Hit(h.skill.skill_id, 0, h.score, h.features, h.skill.confidence))
                for h in bank.search(query, SUGGEST, count_use=False)
            ]
            for h, hit in sorted(found, key=lambda pair: -hybrid.key(pair[1])):
                rel = hybrid.value(hit)
                mark = "suggested" if rel >= threshold else "not suggested"
                out.append(f"| `{query}` | {h.skill.title[:60]} | {h.score:.2f} | {rel:.3f} | {mark} |")
    return out


def fit(cases: Sequence[Case], *, lenient: bool = LENIENT) -> tuple[RelevanceModel, RelevanceModel, float]:
    """Both models on the train split's hits, and the threshold on its queries, with the `lenient` labels or not."""
    train = [c for c in cases if not c.held_out]
    hybrid = model_for([c for c in train if c.mode == "hybrid"], HYBRID_FEATURES, lenient=lenient)
    keyword = model_for([c for c in train if c.mode == "keyword"], KEYWORD_FEATURES, lenient=lenient)
    hybrid_train = [c for c in train if c.mode == "hybrid"]
    return hybrid, keyword, choose_threshold(hybrid_train, relevance_predictor("hybrid", hybrid), lenient=lenient)


def main(argv: Sequence[str] | None = None) -> int:
    from skills_store.embedders import make_embedder
    from skills_store.search.relevance import hybrid_model, keyword_model
    from skills_store.search.relevance_coefs import THRESHOLD

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="refit the models and the threshold on the train split")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--out", type=Path, default=REPORT_PATH)
    args = parser.parse_args(argv)
    embedder = make_embedder(args.embedder)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="skillbank-relevance-") as tmp:
        cases = collect(embedder, load_queries(), Path(tmp))
        errors_only = [error_line_form(q) for q in load_queries() if q.kind == "traceback"]
        line_cases = collect(embedder, errors_only, Path(tmp) / "lines", modes=("hybrid",))
        if args.fit:
            hybrid_m, keyword_m, threshold = fit(cases)
            write_coefs(hybrid_m, keyword_m, threshold)
        else:
            hybrid_m, keyword_m, threshold = hybrid_model(), keyword_model(), THRESHOLD
        hybrid, keyword = relevance_predictor("hybrid", hybrid_m), relevance_predictor("keyword", keyword_m)
        demo = demo_check(embedder, hybrid, threshold, Path(tmp))
    elapsed = time.perf_counter() - start
    other_m, _, other_t = fit(cases, lenient=not LENIENT)  # the same fit on the other labels, for comparison
    other = (f"fitted on the {'strict' if LENIENT else 'lenient'} labels instead", relevance_predictor("o", other_m))
    body, figures = tables(
        cases, hybrid, keyword, threshold, lenient=LENIENT, other=(*other, other_t), line_cases=line_cases
    )
    text = render(args, elapsed, cases, body, figures, demo, threshold)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    # Strict labels: the lenient figures are reported, but a miss under the strict ones still fails the run.
    met = figures["absent held out"] <= 0.10 and figures["first held out"] >= 0.9
    return 0 if met else 1


def render(
    args: argparse.Namespace,
    elapsed: float,
    cases: Sequence[Case],
    body: str,
    f: dict[str, float],
    demo: list[str],
    threshold: float,
) -> str:
    queries = {c.query.id for c in cases}
    held = {c.query.id for c in cases if c.held_out}
    errors = {c.query.id for c in cases if c.error_query}
    return "\n".join(
        [
            "# Calibrated relevance and the suggestion threshold",
            "",
            f"`python -m bench.relevance{' --fit' if args.fit else ''}` ({datetime.now(UTC):%Y-%m-%d}, "
            f"{machine_line()}, {elapsed:.0f} s, embedder `{args.embedder}`).",
            "",
            f"{len(queries)} queries ({len(held)} held out by lesson; {len(errors)} with error lines, the rest in "
            "words), each against three banks: two halves of the starter pack and the distilled lessons of "
            "`bench/data/relevance/lessons.jsonl` (a query's lesson is in one of them), and the whole corpus, each "
            f"with every near-miss distractor. {DEPTH} hits a search, at most {SUGGEST} suggestions. 'absent': "
            "cases whose lesson is not in the bank (queries whose lesson is in no bank included); 'present': cases "
            "whose lesson is. Strict labels: a suggestion is right when it is the query's lesson. Lenient labels "
            "(a rule fixed before measuring, for every query and split): a skill whose pattern's message template "
            "the failure's error line fits and that names its exception type also counts as right (and as "
            "present).",
            "",
            "**Reporting split** (not a new target): `run_tests` searches its suggestions with the failing tests' "
            "error lines, so the suggestion figures are given for the queries with error lines; queries in words "
            "reach `search_skills`, which ranks with no threshold, and their figure is its first hit. The earlier "
            "all-queries row is kept below, with queries in words alone. The tracebacks are searched as given "
            "(the agent's prompt carries the failure with its traceback); the row 'the error line alone' searches "
            "each as `run_tests` sends it, its first `Type: message` line.",
            "",
            f"**Result, held out** (error-line queries at the threshold {threshold}, chosen on train): lenient "
            f"labels (fitted on): absent {f['lenient absent held out']:.2f} (target <= 0.10), first-rank "
            f"{f['lenient first held out']:.2f} (target >= 0.9); strict labels: absent {f['absent held out']:.2f}, "
            f"first-rank {f['first held out']:.2f}. Train: lenient {f['lenient absent train']:.2f} / "
            f"{f['lenient first train']:.2f}, strict {f['absent train']:.2f} / {f['first train']:.2f}. "
            "search_skills' first hit over every query, strict: "
            f"{f['search calibrated relevance (now) held out']:.2f} ordered by relevance, "
            f"{f['search fused score (before) held out']:.2f} by the fused score as before.",
            "",
            body,
            "",
            "### The demo's second session",
            "",
            "Its `KeyError` failures against the starter pack and the lesson its first session learned (relevance "
            "order; search_skills returns the hits under the threshold too, with their relevance):",
            "",
            "| failure | hit | fused score | relevance | |",
            "| --- | --- | --- | --- | --- |",
            *demo,
            "",
            METHOD,
            why(f),
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
