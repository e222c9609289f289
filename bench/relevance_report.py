"""The tables of the relevance report (`bench.relevance`): suggestions, search order, trade-off, calibration.

Suggestions are measured on the queries a suggestion can be searched with: `run_tests` searches with the error
lines of the failing tests, so only queries with error lines (tracebacks, pytest failures) can ever get one. Queries
in words go through `search_skills`, which keeps ranking with no threshold: its figure is the first hit over all
queries. The earlier all-queries row is kept beside them (a reporting split, not a new target: nothing is left
out). Every figure is given for both splits and both labels (strict, lenient: `relevance_set`); only the train
split takes part in fitting and in choosing the threshold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.relevance_eval import FUSED, Outcome, Predictor, brier, choose_threshold, ordered, outcome, reliability
from bench.relevance_set import Case

TRADE_OFF = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
"""Thresholds the held-out trade-off table reports."""
NO_THRESHOLD = -1.0


@dataclass(frozen=True)
class Split:
    name: str
    cases: Sequence[Case]


def splits(cases: Sequence[Case], mode: str, keep: Callable[[Case], bool] = lambda c: True) -> list[Split]:
    return [
        Split(name, [c for c in cases if c.mode == mode and c.held_out == held and keep(c)])
        for name, held in (("train", False), ("held out", True))
    ]


def _ratio(n: int, d: int) -> str:
    return f"{n}/{d} = {n / max(d, 1):.2f}"


def _cells(o: Outcome, lenient: Outcome) -> str:
    return (
        f"{_ratio(o.absent_suggested, o.absent)} | {_ratio(o.first_right, o.present_suggested)} | "
        f"{_ratio(o.first_right, o.present)} | {_ratio(lenient.absent_suggested, lenient.absent)} | "
        f"{_ratio(lenient.first_right, lenient.present)}"
    )


_HEAD = [
    "| suggestions | split | absent: any suggestion | present, of those with one: first right | present, all: "
    "first-rank | lenient: absent, any | lenient: first-rank |",
    "| --- | --- | --- | --- | --- | --- | --- |",
]


def suggestion_rows(rows: Sequence[tuple[str, Predictor, float]], parts: Sequence[Split]) -> list[str]:
    out = list(_HEAD)
    for name, p, cut in rows:
        for part in parts:
            strict, lenient = outcome(part.cases, p, cut), outcome(part.cases, p, cut, lenient=True)
            out.append(f"| {name} | {part.name} | {_cells(strict, lenient)} |")
    return out


def search_first(cases: Sequence[Case], p: Predictor, *, lenient: bool = False) -> tuple[int, int]:
    """Present cases whose first hit (no threshold) is right, of all present cases."""
    present = [c for c in cases if (c.present_lenient if lenient else c.present)]
    right = 0
    for c in present:
        hits = ordered(c, p)
        right += bool(hits) and bool(hits[0].lenient if lenient else hits[0].label)
    return right, len(present)


def tables(
    cases: Sequence[Case],
    hybrid: Predictor,
    keyword: Predictor,
    threshold: float,
    *,
    lenient: bool,
    other: tuple[str, Predictor, float],
    line_cases: Sequence[Case],
) -> tuple[str, dict]:
    """The report's tables as markdown, and the figures its text quotes; `lenient`: the labels the threshold was
    chosen on (the fused score's is chosen the same way); `other`: the model fitted on the other labels, with its
    threshold, for comparison; `line_cases`: the error-line queries as `run_tests` sends them (the line alone)."""
    errors = splits(cases, "hybrid", lambda c: c.error_query)
    errors_k = splits(cases, "keyword", lambda c: c.error_query)
    fused_t = choose_threshold(splits(cases, "hybrid")[0].cases, FUSED, lenient=lenient)
    lines = [
        "### Suggestions: queries with error lines (what `run_tests` suggests from)",
        "",
        *suggestion_rows(
            [
                ("before: top 3 hits by fused score, no threshold", FUSED, NO_THRESHOLD),
                (f"raw fused score >= {fused_t} (chosen on train the same way)", FUSED, fused_t),
                (f"hybrid relevance >= {threshold} (run_tests, agent prompt)", hybrid, threshold),
                (f"hybrid relevance {other[0]}, >= {other[2]}", other[1], other[2]),
            ],
            errors,
        ),
        *suggestion_rows([(f"keyword-only relevance >= {threshold} (Claude Code hook)", keyword, threshold)], errors_k)[
            2:
        ],
        *suggestion_rows(
            [(f"hybrid relevance >= {threshold}, the error line alone (as run_tests sends it)", hybrid, threshold)],
            splits(line_cases, "hybrid"),
        )[2:],
        "",
        "### search_skills: the first hit, every query, no threshold",
        "",
        "| order | split | error-line queries | queries in words | all | lenient: all |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    figures: dict[str, float] = {}
    for name, p in (("fused score (before)", FUSED), ("calibrated relevance (now)", hybrid)):
        for part in splits(cases, "hybrid"):
            tb = search_first([c for c in part.cases if c.error_query], p)
            prose = search_first([c for c in part.cases if not c.error_query], p)
            whole, loose = search_first(part.cases, p), search_first(part.cases, p, lenient=True)
            figures[f"search {name} {part.name}"] = whole[0] / max(whole[1], 1)
            lines.append(
                f"| {name} | {part.name} | {_ratio(*tb)} | {_ratio(*prose)} | {_ratio(*whole)} | {_ratio(*loose)} |"
            )
    words, every = splits(cases, "hybrid", lambda c: not c.error_query), splits(cases, "hybrid")
    lines += [
        "",
        "### Every query at the threshold (the earlier row), and queries in words alone",
        "",
        "The agent's first prompt cuts `search_skills` hits at the same threshold; its query is the task and, when "
        "the first run fails, the failure, so a task with no failing test meets the threshold as words.",
        "",
        *suggestion_rows([(f"all queries, hybrid relevance >= {threshold}", hybrid, threshold)], every),
        *suggestion_rows([(f"queries in words, hybrid relevance >= {threshold}", hybrid, threshold)], words)[2:],
        "",
        "### The trade-off on the held-out error-line queries",
        "",
        "Reported, not chosen on (the threshold comes from the train split), hybrid relevance:",
        "",
        "| threshold | absent: any suggestion | present, all: first-rank | lenient: absent | lenient: first-rank |",
        "| --- | --- | --- | --- | --- |",
    ]
    for cut in TRADE_OFF:
        o, lo = outcome(errors[1].cases, hybrid, cut), outcome(errors[1].cases, hybrid, cut, lenient=True)
        lines.append(
            f"| {cut} | {o.absent_rate:.2f} | {o.first_rank:.2f} | {lo.absent_rate:.2f} | {lo.first_rank:.2f} |"
        )
    for part in errors:
        o, lo = outcome(part.cases, hybrid, threshold), outcome(part.cases, hybrid, threshold, lenient=True)
        ceiling = search_first(part.cases, hybrid)
        oo = outcome(part.cases, other[1], other[2])
        figures |= {f"absent {part.name} other": oo.absent_rate, f"first {part.name} other": oo.first_rank}
        figures |= {
            f"absent {part.name}": o.absent_rate,
            f"first {part.name}": o.first_rank,
            f"precision {part.name}": o.precision,
            f"lenient absent {part.name}": lo.absent_rate,
            f"lenient first {part.name}": lo.first_rank,
            f"ceiling {part.name}": ceiling[0] / max(ceiling[1], 1),
        }
    held = splits(cases, "hybrid")[1].cases
    hits_h = [h for c in held for h in c.hits]
    hits_k = [h for c in splits(cases, "keyword")[1].cases for h in c.hits]
    lines += [
        "",
        "### Calibration over every held-out hit (k = 5 a query), reliability bins",
        "",
        "| predictor | labels | Brier | bins (range: hits, mean predicted -> observed) |",
        "| --- | --- | --- | --- |",
    ]
    for name, hits, p in (
        ("raw fused score (baseline)", hits_h, FUSED),
        ("hybrid relevance", hits_h, hybrid),
        ("keyword-only relevance", hits_k, keyword),
    ):
        for lenient_labels in (False, True):
            bins = "; ".join(
                f"{b}: {n}, {m:.2f} -> {o:.2f}" for b, n, m, o in reliability(hits, p.value, lenient=lenient_labels)
            )
            labels = "lenient" if lenient_labels else "strict"
            lines.append(f"| {name} | {labels} | {brier(hits, p.value, lenient=lenient_labels):.4f} | {bins} |")
    return "\n".join(lines), figures
