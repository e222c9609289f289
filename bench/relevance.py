"""Calibrated relevance: fit the model and measure suggestions on a held-out split. `python -m bench.relevance`.

The labelled set (`bench.relevance_set`): real tracebacks and descriptions, the demo's failures and failures of
distilled lessons, each against banks that hold its lesson and banks that do not.

Queries are split by lesson (40% held out, by a hash of the lesson id): no held-out lesson is seen in fitting.
`--fit` fits the logistic models (hybrid, and keyword-only for the Claude Code hook) on the train split, picks the
suggestion threshold on it, and writes `skills_store/search/relevance_coefs.py`; every run then reports the
held-out figures (suggestions for queries whose lesson is absent / present, calibration, Brier score against the
raw fused score) to `docs/benchmarks/relevance.md`. Exits 1 when the held-out split misses a target of the issue:
at most 10% of the cases whose lesson is absent get a suggestion, and the first suggestion is the lesson in at
least 90% of ALL the cases whose lesson is present (first-rank; a case with no suggestion is a miss). The second is
not met today (docs/benchmarks/relevance.md says why).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench.common import machine_line
from bench.relevance_set import DEPTH, ROOT, Case, Hit, collect, labelled_corpus, load_queries
from skills_store.bank import SkillBank
from skills_store.protocols import Embedder
from skills_store.search.relevance import HYBRID_FEATURES, KEYWORD_FEATURES, RelevanceModel
from skills_store.starter import load_starter_pack

COEFS_PATH = ROOT / "skills_store" / "search" / "relevance_coefs.py"
REPORT_PATH = ROOT / "docs" / "benchmarks" / "relevance.md"
SUGGEST = 3
TRADE_OFF = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
"""Thresholds the held-out trade-off table reports."""
"""Suggestions a test run carries at most (run_tests)."""
MAX_ABSENT_RATE = 0.08
"""The threshold is the lowest that keeps train queries whose lesson is absent at or under this rate
(2 points under the 10% target)."""


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


def model_for(cases: Sequence[Case], names: Sequence[str]) -> RelevanceModel:
    hits = [h for c in cases for h in c.hits]
    w, b = fit_logistic(matrix(hits, names), np.array([h.label for h in hits], dtype=float))
    return RelevanceModel({n: round(float(v), 4) for n, v in zip(names, w, strict=True)}, round(b, 4))


@dataclass(frozen=True)
class Outcome:
    absent: int
    absent_suggested: int
    present: int
    present_suggested: int
    first_right: int
    """Present cases whose first suggestion is their lesson."""

    @property
    def absent_rate(self) -> float:
        return self.absent_suggested / max(self.absent, 1)

    @property
    def precision(self) -> float:
        """Of the present cases with any suggestion, the share whose first suggestion is the lesson."""
        return self.first_right / max(self.present_suggested, 1)

    @property
    def first_rank(self) -> float:
        """The issue's first-rank: of ALL present cases, the share whose first suggestion is the lesson (a case
        with no suggestion counts as a miss)."""
        return self.first_right / max(self.present, 1)


def suggestions(case: Case, score_of, threshold: float) -> list[Hit]:
    """What run_tests would carry: hits at or above the threshold, in search order, at most SUGGEST."""
    return [h for h in case.hits if score_of(h) >= threshold][:SUGGEST]


def outcome(cases: Sequence[Case], score_of, threshold: float) -> Outcome:
    absent = [c for c in cases if not c.present]
    present = [c for c in cases if c.present]
    shown = [suggestions(c, score_of, threshold) for c in present]
    return Outcome(
        absent=len(absent),
        absent_suggested=sum(1 for c in absent if suggestions(c, score_of, threshold)),
        present=len(present),
        present_suggested=sum(1 for s in shown if s),
        first_right=sum(1 for s in shown if s and s[0].label),
    )


def choose_threshold(cases: Sequence[Case], score_of) -> float:
    grid = [round(t, 2) for t in np.arange(0.02, 0.99, 0.01)]
    return next((t for t in grid if outcome(cases, score_of, t).absent_rate <= MAX_ABSENT_RATE), grid[-1])


def brier(hits: Sequence[Hit], score_of) -> float:
    return float(np.mean([(min(max(score_of(h), 0.0), 1.0) - h.label) ** 2 for h in hits])) if hits else 0.0


def reliability(hits: Sequence[Hit], score_of, bins: int = 5) -> list[tuple[str, int, float, float]]:
    """(bin, hits, mean predicted, observed rate) for equal-width bins of the predicted probability."""
    out = []
    for i in range(bins):
        lo, hi = i / bins, (i + 1) / bins
        inside = [h for h in hits if lo <= min(max(score_of(h), 0.0), 1.0) < hi or (i == bins - 1 and score_of(h) >= 1)]
        if inside:
            mean = float(np.mean([min(max(score_of(h), 0.0), 1.0) for h in inside]))
            out.append((f"{lo:.1f}-{hi:.1f}", len(inside), mean, float(np.mean([h.label for h in inside]))))
    return out


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


def _pct(x: float) -> str:
    return f"{x:.2f}"


def report(cases: Sequence[Case], hybrid: RelevanceModel, keyword: RelevanceModel, threshold: float) -> str:
    """The held-out figures, relevance against the raw fused score, as markdown."""
    rel_h, rel_k = (lambda h: hybrid.predict(h.features)), (lambda h: keyword.predict(h.features))
    fused = lambda h: h.score  # noqa: E731
    train_h = [c for c in cases if c.mode == "hybrid" and not c.held_out]
    test_h = [c for c in cases if c.mode == "hybrid" and c.held_out]
    test_k = [c for c in cases if c.mode == "keyword" and c.held_out]
    fused_t = choose_threshold(train_h, fused)
    rows = [
        ("before: top 3 hits, no threshold", outcome(test_h, fused, -1.0)),
        (f"raw fused score >= {fused_t} (chosen on train the same way)", outcome(test_h, fused, fused_t)),
        (f"hybrid relevance >= {threshold} (search_skills, run_tests)", outcome(test_h, rel_h, threshold)),
        (f"keyword-only relevance >= {threshold} (Claude Code hook)", outcome(test_k, rel_k, threshold)),
    ]
    lines = [
        "| suggestions | absent: any suggestion | present, of those with a suggestion: first right | present, all: "
        "first suggestion right (first-rank) |",
        "| --- | --- | --- | --- |",
    ]
    for name, o in rows:
        lines.append(
            f"| {name} | {o.absent_suggested}/{o.absent} = {_pct(o.absent_rate)} | "
            f"{o.first_right}/{o.present_suggested} = {_pct(o.precision)} | {o.first_right}/{o.present} = "
            f"{_pct(o.first_rank)} |"
        )
    lines += [
        "",
        "The trade-off on the held-out split (reported, not chosen on: the threshold above comes from the train "
        "split), hybrid relevance:",
        "",
        "| threshold | absent: any suggestion | present, all: first-rank |",
        "| --- | --- | --- |",
    ]
    for cut in TRADE_OFF:
        o = outcome(test_h, rel_h, cut)
        lines.append(f"| {cut} | {_pct(o.absent_rate)} | {_pct(o.first_rank)} |")
    hits_h = [h for c in test_h for h in c.hits]
    hits_k = [h for c in test_k for h in c.hits]
    lines += [
        "",
        "Calibration over every held-out hit (k = 5 a query), reliability bins:",
        "",
        "| predictor | Brier | bins (range: hits, mean predicted -> observed) |",
        "| --- | --- | --- |",
    ]
    for name, hits, f in (
        ("raw fused score (baseline)", hits_h, fused),
        ("hybrid relevance", hits_h, rel_h),
        ("keyword-only relevance", hits_k, rel_k),
    ):
        bins = "; ".join(f"{b}: {n}, {m:.2f} -> {o:.2f}" for b, n, m, o in reliability(hits, f))
        lines.append(f"| {name} | {brier(hits, f):.4f} | {bins} |")
    return "\n".join(lines)


def demo_check(embedder: Embedder, hybrid: RelevanceModel, threshold: float, work: Path) -> list[str]:
    """The demo's second session: its failures against the starter pack and the lesson its first session learned
    (`lesson-csv-header-keys`); each hit's relevance, and whether it is suggested."""
    out = []
    learned = [s for s in labelled_corpus() if s.skill_id == "lesson-csv-header-keys"]
    with SkillBank.open(work / "demo", embedder) as bank:
        bank.upsert([*load_starter_pack(), *learned])
        for query in ("KeyError: 'price'", "KeyError: 'qty'"):
            for h in bank.search(query, SUGGEST, count_use=False):
                rel = hybrid.predict(h.features)
                mark = "suggested" if rel >= threshold else "not suggested"
                out.append(f"| `{query}` | {h.skill.title[:60]} | {h.score:.2f} | {rel:.3f} | {mark} |")
    return out


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
        if args.fit:
            train = [c for c in cases if not c.held_out]
            hybrid = model_for([c for c in train if c.mode == "hybrid"], HYBRID_FEATURES)
            keyword = model_for([c for c in train if c.mode == "keyword"], KEYWORD_FEATURES)
            threshold = choose_threshold([c for c in train if c.mode == "hybrid"], lambda h: hybrid.predict(h.features))
            write_coefs(hybrid, keyword, threshold)
        else:
            hybrid, keyword, threshold = hybrid_model(), keyword_model(), THRESHOLD
        demo = demo_check(embedder, hybrid, threshold, Path(tmp))
    elapsed = time.perf_counter() - start
    queries = {c.query.id for c in cases}
    held = {c.query.id for c in cases if c.held_out}
    text = "\n".join(
        [
            "# Calibrated relevance and the suggestion threshold",
            "",
            f"`python -m bench.relevance{' --fit' if args.fit else ''}` ({datetime.now(UTC):%Y-%m-%d}, "
            f"{machine_line()}, {elapsed:.0f} s, embedder `{args.embedder}`).",
            "",
            f"{len(queries)} queries ({len(held)} held out by lesson), each against three banks: two halves of the "
            "starter pack and the distilled lessons of `bench/data/relevance/lessons.jsonl` (a query's lesson is in "
            "one of them), and the whole corpus, each with every near-miss distractor. "
            f"{DEPTH} hits a search, at most {SUGGEST} suggestions. 'absent': cases whose lesson is not in the "
            "bank (queries whose lesson is in no bank included); 'present': cases whose lesson is. A suggestion is "
            "right when it is the query's lesson. Held-out split only:",
            "",
            report(cases, hybrid, keyword, threshold),
            "",
            "The demo's second session: its `KeyError` failures against the starter pack and the lesson its first "
            "session learned (the generic `KeyError` lessons stay under the threshold for `'qty'`: search_skills "
            "still ranks them, with their relevance):",
            "",
            "| failure | hit | fused score | relevance | |",
            "| --- | --- | --- | --- | --- |",
            *demo,
            "",
            "## Method",
            "",
            "- Features of a hit (`skills_store/search/relevance.py`): the query's error line fits the pattern's "
            "message template (placeholders as wildcards), its exception type is named by the pattern (or another "
            "type is), the share of the pattern's literal words in the error lines, the query's quoted names found "
            "in the skill, cosine similarity and its margin over the query's other hits, BM25 and its margin, the "
            "reciprocal rank on each side, the fused score. The keyword-only model (the Claude Code hook) has the "
            "signature and keyword features only.",
            "- Logistic regression (Newton's method, L2 1.0) on the train split's hits; the coefficients are written "
            "to `skills_store/search/relevance_coefs.py` by `--fit`.",
            f"- The threshold is the lowest that keeps at most {MAX_ABSENT_RATE:.0%} of the train split's "
            "absent-lesson cases with any suggestion (2 points under the 10% target); the held-out figures above "
            "never took part in fitting or choosing.",
            "- The raw fused score is no probability: nearly every hit scores 0.8-1.0 whether it applies or not, so "
            "no cut on it separates absent from present (the lowest cut that meets the absent target suggests "
            "nothing at all).",
            "- Labels are strict: a hit is relevant only when it is the query's lesson (the demo's failures also "
            "count the generic `KeyError` skill). A near-duplicate starter skill that would also help counts as "
            "irrelevant, so the absent rate is an upper bound.",
            "",
            "## Why first-rank over all in-bank cases is not at 0.9",
            "",
            "The issue asks for first-rank >= 0.9 on the cases whose lesson is in the bank, counting a case with "
            "no suggestion as a miss. It is not reached, and no threshold reaches it together with the absent "
            "target on this labelled set:",
            "",
            "- The ceiling is the search itself: with no threshold at all the first hit is the lesson in only "
            "the share of the 'before' row (0.80 held out; 0.75 on train). Ordering the suggestions by relevance "
            "instead of the search order would lift that to 0.91 unthresholded, but at the chosen threshold it "
            "changes nothing (the first suggestion is already right in 0.96 of the cases that get one).",
            "- The trade-off table: the absent rate falls to 10% only near 0.6, where first-rank is about 0.6. "
            "The present cases the cut drops are mostly descriptions in words (no error line, so no signature "
            "to agree with: only cosine and BM25, whose values for the lesson, 0.35-0.7 cosine, overlap those of "
            "the best unrelated hit of an absent case) and tracebacks whose pattern template does not fit the "
            "error line (`signature` 0: `KeyError: 'qty'` against the learned `KeyError: '<name>'` lesson fits, "
            "but that lesson ranks second, relevance 0.58 in the demo table above).",
            "- The absent cases that keep the threshold high are mostly near-duplicates that do apply: "
            "`AttributeError: 'dict' object has no attribute 'iteritems'` (its lesson held out of the bank) "
            'against the generic "object has no such attribute" starter skill, whose template it fits; `ValueError: '
            "invalid literal for int()` against the `int()` distractor; a `DATABASE_URL` description against the "
            "environment-variable distractor. Strict labels count these as noise. Relabelling them as relevant "
            "would lower the threshold, but it was not done here: the labels would be chosen by looking at the "
            "model's errors, held-out split included.",
            "- Features tried on the train split and not kept (no held-out gain): the abstracted signature of "
            "the query's error line (`skills_store.distill.signature`) equal to the pattern's, rank 1 on both "
            "sides, and cosine/margin interactions for queries in words (train first-rank 0.39 vs 0.40, held out "
            "0.51 vs 0.56 at the train-chosen threshold).",
            "",
        ]
    )
    args.out.write_text(text, encoding="utf-8")
    print(text)
    held_hybrid = [c for c in cases if c.mode == "hybrid" and c.held_out]
    result = outcome(held_hybrid, lambda h: hybrid.predict(h.features), threshold)
    return 0 if result.absent_rate <= 0.10 and result.first_rank >= 0.9 else 1  # not met today: see the report


if __name__ == "__main__":
    raise SystemExit(main())
