"""The packaged MiniLM run by onnxruntime (the default) against torch (the runtime before), in one run.

Both run in the embedder worker process, as the server runs them (`WorkerEmbedder("minilm:onnxruntime")` and
`WorkerEmbedder("minilm:torch")`), alternating spawn by spawn and query by query:
- the first search's wait: spawn to the first vector (the import and load of the runtime and the model);
- the worker's resident memory once loaded and after the queries;
- one encode, wall time seen by the caller and CPU time the worker spent (its threads together: what it takes
  from the server and the client on a small machine), for short one-line queries and tracebacks, back to back
  and paced;
- a batch of 256 skill texts (what an import, a distill or a reindex sends);
- the largest difference between the two runtimes' vectors.
Exit status 1 when onnxruntime is slower than torch at p50 for a short query or needs more CPU for one.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np

from bench.common import machine, write_report
from bench.search import queries, skill_text
from bench.search_stdio import short_queries
from skills_store.embedders.worker import WorkerEmbedder

RUNTIMES = {"onnxruntime": "minilm:onnxruntime", "torch": "minilm:torch"}
GAP_S = 0.025
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_ms(pid: int) -> float:
    """User + system CPU of process `pid` and all its threads so far, in ms (clock ticks: 10 ms steps, so only
    sums over many calls are meaningful)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / _TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cells(ours: float, base: float, unit: str, digits: int) -> str:
    return f"| {ours:.{digits}f} {unit} | {base:.{digits}f} {unit} | {ours / base:.2f}x |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=150, help="distinct queries per kind")
    parser.add_argument("--spawns", type=int, default=5, help="cold starts per runtime")
    args = parser.parse_args(argv)
    load_before = ", ".join(f"{x:.1f}" for x in os.getloadavg())

    cold: dict[str, list[float]] = {name: [] for name in RUNTIMES}
    for i in range(args.spawns):
        for name in list(RUNTIMES) if i % 2 == 0 else list(RUNTIMES)[::-1]:
            start = time.perf_counter()
            worker = WorkerEmbedder(RUNTIMES[name])
            worker.embed([f"first search of session {i}"])
            cold[name].append(time.perf_counter() - start)
            worker.close()

    workers = {name: WorkerEmbedder(spec) for name, spec in RUNTIMES.items()}
    for worker in workers.values():
        worker.embed(["warm up"])
    loaded = {name: rss_mb(w.pid or 0) for name, w in workers.items()}
    kinds = [
        ("short one-line queries, back to back", short_queries(args.queries, 21), 0.0),
        ("tracebacks, back to back", queries(args.queries, seed=22), 0.0),
        (f"short one-line queries, {GAP_S * 1000:.0f} ms apart", short_queries(args.queries, 23), GAP_S),
        (f"tracebacks, {GAP_S * 1000:.0f} ms apart", queries(args.queries, seed=24), GAP_S),
    ]
    rows: dict[str, dict[str, tuple[float, float]]] = {}
    diff = 0.0
    for kind, texts, gap in kinds:
        wall: dict[str, list[float]] = {name: [] for name in workers}
        cpu = dict.fromkeys(workers, 0.0)
        for j, text in enumerate(texts):
            got = {}
            for name in list(workers) if j % 2 == 0 else list(workers)[::-1]:
                worker = workers[name]
                time.sleep(gap)
                before = cpu_ms(worker.pid or 0)
                start = time.perf_counter()
                got[name] = worker.embed([text])
                wall[name].append((time.perf_counter() - start) * 1000)
                cpu[name] += cpu_ms(worker.pid or 0) - before
            diff = max(diff, float(np.abs(got["onnxruntime"] - got["torch"]).max()))
        rows[kind] = {name: (statistics.median(wall[name]), cpu[name] / len(texts)) for name in workers}
    batch = [" ".join(skill_text(random.Random(31 + i), i)) for i in range(256)]
    batches: dict[str, float] = {}
    for name in ["torch", "onnxruntime", "torch", "onnxruntime"]:
        start = time.perf_counter()
        vectors = workers[name].embed(batch)
        batches[name] = min(batches.get(name, float("inf")), time.perf_counter() - start)
        if name == "onnxruntime":
            diff = max(diff, float(np.abs(vectors - workers["torch"].embed(batch)).max()))
    after = {name: rss_mb(w.pid or 0) for name, w in workers.items()}
    for worker in workers.values():
        worker.close()

    lines = [
        "# MiniLM in the embedder worker: onnxruntime against torch",
        "",
        machine(),
        f"Load average (1, 5, 15 min) at the start: {load_before}; at the end: "
        + ", ".join(f"{x:.1f}" for x in os.getloadavg())
        + " (2 cores, shared).",
        "",
        "The packaged all-MiniLM-L6-v2 in the embedder worker (as the server runs it), the two runtimes alternating "
        f"spawn by spawn and query by query. Largest difference between their vectors: {diff:.1e}.",
        "",
        "| measure | onnxruntime | torch | ratio |",
        "| --- | --- | --- | --- |",
    ]
    o, t = statistics.median(cold["onnxruntime"]), statistics.median(cold["torch"])
    lines.append(f"| spawn to first vector (the first search's wait), median of {args.spawns} " + _cells(o, t, "s", 2))
    lines.append("| worker RSS, loaded " + _cells(loaded["onnxruntime"], loaded["torch"], "MB", 0))
    lines.append("| worker RSS, after all the encodes " + _cells(after["onnxruntime"], after["torch"], "MB", 0))
    for kind, row in rows.items():
        (ow, oc), (tw, tc) = row["onnxruntime"], row["torch"]
        lines.append(f"| {kind}: encode p50 wall " + _cells(ow, tw, "ms", 1))
        lines.append(f"| {kind}: worker CPU per encode (mean) " + _cells(oc, tc, "ms", 1))
    lines.append("| a batch of 256 skill texts, best of 2 " + _cells(batches["onnxruntime"], batches["torch"], "s", 2))
    short = rows[kinds[0][0]]
    ok = short["onnxruntime"][0] <= short["torch"][0] and short["onnxruntime"][1] <= short["torch"][1]
    lines += ["", f"Result: {'pass' if ok else 'FAIL'} (onnxruntime no slower and no hungrier for a short query)."]
    write_report("\n".join(lines) + "\n", "embedder_runtime")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
