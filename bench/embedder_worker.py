"""What the embedder worker process costs a search: `SkillBank.search` at 10k skills with the MiniLM model in
this process against the same model in a worker process (`make_embedder(..., isolated=True)`, what the server
uses), on the same store, with the same distinct tracebacks (no embedding cache hits), interleaved query by query
in one run so that the machine's load falls on both alike.

The encode alone (one short query) is timed the same way: the worker's cost is one pipe round trip, the texts as
JSON one way and 1.5 KB of float32 back.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import numpy as np

from bench.common import machine, write_report
from bench.search import CACHE, build_store, queries, skill_text
from skills_store.bank import SkillBank
from skills_store.embedders import make_embedder
from skills_store.embedders.minilm import MiniLMEmbedder
from skills_store.embedders.worker import WorkerEmbedder

#: The worker may cost at most this much more per search at p50 (ratio to in-process).
TARGET_RATIO = 1.1


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _base_text(i: int) -> str:
    return " ".join(skill_text(random.Random(7 + i), i))


def p50(values: list[float]) -> float:
    return statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    load_before = load()
    local_model = MiniLMEmbedder()
    built = (CACHE / f"store-{args.size}" / "built").is_file()  # bench.search's store, reused when it exists
    base = np.zeros((0, 384), np.float32) if built else local_model.embed([_base_text(i) for i in range(2000)])
    home = build_store(args.size, base)
    texts = queries(args.queries, seed=args.size + 11)
    short = [f"KeyError: 'field_{i}'" for i in range(args.queries)]
    searches: dict[str, list[float]] = {"in-process": [], "worker": []}
    encodes: dict[str, list[float]] = {"in-process": [], "worker": []}
    worker = WorkerEmbedder("minilm")
    with (
        SkillBank.open(home, make_embedder("minilm")) as local,
        SkillBank.open(home, make_embedder("minilm", isolated=True)) as isolated,
    ):
        banks = {"in-process": local, "worker": isolated}
        for bank in banks.values():
            bank.search("warm up the model", 5)
        worker.embed(["warm up"])
        for i, text in enumerate(texts):
            order = list(banks.items()) if i % 2 == 0 else list(banks.items())[::-1]
            for name, bank in order:
                start = time.perf_counter()
                bank.search(text, 5)
                searches[name].append((time.perf_counter() - start) * 1000)
            for name, embedder in (("in-process", local_model), ("worker", worker))[:: 1 if i % 2 else -1]:
                start = time.perf_counter()
                embedder.embed([short[i]])
                encodes[name].append((time.perf_counter() - start) * 1000)
        same = np.abs(local_model.embed(texts[:8]) - worker.embed(texts[:8])).max()
    worker.close()
    ratio = p50(searches["worker"]) / p50(searches["in-process"])
    lines = [
        "# Embedder worker: search latency with the model in-process vs in a worker process",
        "",
        machine(),
        f"Load average (1, 5, 15 min) at the start: {load_before}; at the end: {load()} (2 cores, shared).",
        "",
        f"{args.queries} distinct real tracebacks, `SkillBank.search(k=5)` at {args.size:,} skills, the two "
        "embedders interleaved query by query on one store; max vector difference worker vs in-process: "
        f"{same:.1e}.",
        "",
        "| case | in-process p50 ms | worker p50 ms | in-process p90 ms | worker p90 ms | ratio p50 | target |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        _row(f"search, {args.size:,} skills, tracebacks", searches, f"<= {TARGET_RATIO}x"),
        _row("encode one short query", encodes, "-"),
        "",
        f"Result: {ratio:.2f}x {'pass' if ratio <= TARGET_RATIO else 'FAIL'}.",
        "",
    ]
    report = "\n".join(lines)
    print(report)
    write_report(report, "embedder_worker")
    return 0 if ratio <= TARGET_RATIO else 1


def _row(label: str, times: dict[str, list[float]], target: str) -> str:
    a, b = times["in-process"], times["worker"]
    p90 = [float(np.percentile(x, 90)) for x in (a, b)]
    return (
        f"| {label} | {p50(a):.1f} | {p50(b):.1f} | {p90[0]:.1f} | {p90[1]:.1f} | {p50(b) / p50(a):.2f}x | {target} |"
    )


if __name__ == "__main__":
    raise SystemExit(main())
