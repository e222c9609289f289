"""Retrieval quality benchmark: `python -m bench.retrieval`.

Loads the starter pack and the near-miss distractors into a fresh temporary skill bank with the real MiniLM
embedder, runs every eval-set query in hybrid, vector-only and keyword-only mode, and writes recall@1, recall@3
and MRR per mode and query kind to `docs/benchmarks/retrieval.md`. Exits with status 1 when hybrid does not beat
both single modes on MRR.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bench.common import machine_line
from bench.retrieval.evaluate import (
    DEPTH,
    KINDS,
    MODES,
    Metrics,
    QueryResult,
    build_bank,
    hybrid_wins,
    load_evalset,
    run_queries,
    summarize,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "docs" / "benchmarks" / "retrieval.md"


def _rank(value: int | None) -> str:
    return str(value) if value is not None else f">{DEPTH}"


def render(
    table: dict[tuple[str, str], Metrics],
    results: Sequence[QueryResult],
    *,
    corpus: int,
    build_s: float,
    passed: bool,
) -> str:
    queries = [r.query for r in results if r.mode == MODES[0]]
    counts = {kind: sum(1 for q in queries if q.kind == kind) for kind in KINDS}
    lines = [
        "# Retrieval quality: hybrid vs vector-only vs keyword-only",
        "",
        f"- Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {machine_line()}",
        f"- Corpus: {corpus} skills (starter pack + near-miss distractors); embedder all-MiniLM-L6-v2",
        f"- Queries: {len(queries)} ({counts['traceback']} real tracebacks from `bench/retrieval/snippets`, "
        f"{counts['description']} natural-language descriptions); results fetched per query: {DEPTH}",
        f"- Bank build (open + embed + upsert): {build_s:.1f} s",
        "- Command: `python -m bench.retrieval`",
        "",
        "| mode | queries | recall@1 | recall@3 | MRR |",
        "| --- | --- | --- | --- | --- |",
    ]
    for mode in MODES:
        for kind in ("all", *KINDS):
            m = table[(mode, kind)]
            label = f"**{mode}**" if kind == "all" else f"{mode} / {kind}"
            lines.append(f"| {label} | {m.n} | {m.recall_at_1:.3f} | {m.recall_at_3:.3f} | {m.mrr:.3f} |")
    hybrid, vector, keyword = (table[(mode, "all")].mrr for mode in MODES)
    lines += [
        "",
        "| target | figure | result |",
        "| --- | --- | --- |",
        f"| hybrid MRR > vector-only MRR | {hybrid:.3f} vs {vector:.3f} | {'pass' if hybrid > vector else 'FAIL'} |",
        f"| hybrid MRR > keyword-only MRR | {hybrid:.3f} vs {keyword:.3f} | {'pass' if hybrid > keyword else 'FAIL'} |",
        "",
        f"Overall: **{'PASS' if passed else 'FAIL'}**",
        "",
        "## Queries hybrid does not rank in the top 3",
        "",
        "| query | kind | expected | hybrid | vector | keyword | hybrid top-1 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    by_key = {(r.mode, r.query.id): r for r in results}
    misses = 0
    for q in queries:
        h = by_key[("hybrid", q.id)]
        if h.rank is not None and h.rank <= 3:
            continue
        misses += 1
        top = h.ranked[0] if h.ranked else "-"
        lines.append(
            f"| {q.id} | {q.kind} | {q.expected} | {_rank(h.rank)} | {_rank(by_key[('vector', q.id)].rank)} | "
            f"{_rank(by_key[('keyword', q.id)].rank)} | {top} |"
        )
    if not misses:
        lines.append("| (none) | | | | | | |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="markdown report to write")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from skills_store.embedders import make_embedder

    queries = load_evalset()
    with tempfile.TemporaryDirectory(prefix="skillbank-retrieval-") as tmp:
        start = time.perf_counter()
        with build_bank(Path(tmp) / "home", make_embedder("minilm")) as bank:
            build_s = time.perf_counter() - start
            corpus = bank.count()
            bank.search("warm up the model", k=1, count_use=False)
            results = run_queries(bank, queries)
    table = summarize(results)
    passed = hybrid_wins(table)
    report = render(table, results, corpus=corpus, build_s=build_s, passed=passed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report, encoding="utf-8")
    print(report)
    print(f"wrote {args.out}")
    if not passed:
        sys.exit(1)


if __name__ == "__main__":
    main()
