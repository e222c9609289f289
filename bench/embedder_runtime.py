"""The packaged MiniLM's three runtimes in one run: onnxruntime with 8-bit weights (the default), onnxruntime in
full precision (the default before) and torch (the default before that).

All three run in the embedder worker process, as the server runs them (`WorkerEmbedder("minilm:int8")`,
`"minilm:onnxruntime"`, `"minilm:torch"`), taking turns spawn by spawn and query by query:
- the first search's wait: spawn to the first vector (the import and load of the runtime and the model);
- the worker's resident memory once loaded and after the queries;
- one encode, wall time seen by the caller and CPU time the worker spent (its threads together: what it takes
  from the server and the client on a small machine), for short one-line queries and tracebacks, back to back
  and paced;
- a batch of 256 skill texts (what an import, a distill or a reindex sends);
- how far their vectors are apart: the largest difference between full precision's and torch's, the lowest
  cosine between 8-bit and full precision.
Exit status 1 when the 8-bit default is slower than full precision at p50 for a short query or needs more CPU.
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

RUNTIMES = {"int8": "minilm:int8", "onnxruntime": "minilm:onnxruntime", "torch": "minilm:torch"}
DEFAULT, BASELINE = "int8", "onnxruntime"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=150, help="distinct queries per kind")
    parser.add_argument("--spawns", type=int, default=5, help="cold starts per runtime")
    args = parser.parse_args(argv)
    load_before = ", ".join(f"{x:.1f}" for x in os.getloadavg())

    cold: dict[str, list[float]] = {name: [] for name in RUNTIMES}
    for i in range(args.spawns):
        for name in _turn(list(RUNTIMES), i):
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
    diff, cosine = 0.0, 1.0
    for kind, texts, gap in kinds:
        wall: dict[str, list[float]] = {name: [] for name in workers}
        cpu = dict.fromkeys(workers, 0.0)
        for j, text in enumerate(texts):
            got = {}
            for name in _turn(list(workers), j):
                worker = workers[name]
                time.sleep(gap)
                before = cpu_ms(worker.pid or 0)
                start = time.perf_counter()
                got[name] = worker.embed([text])
                wall[name].append((time.perf_counter() - start) * 1000)
                cpu[name] += cpu_ms(worker.pid or 0) - before
            diff = max(diff, float(np.abs(got["onnxruntime"] - got["torch"]).max()))
            cosine = min(cosine, float(got["int8"][0] @ got["onnxruntime"][0]))
        rows[kind] = {name: (statistics.median(wall[name]), cpu[name] / len(texts)) for name in workers}
    batch = [" ".join(skill_text(random.Random(31 + i), i)) for i in range(256)]
    batches: dict[str, float] = {}
    made: dict[str, np.ndarray] = {}
    for name in [*RUNTIMES, *reversed(RUNTIMES)]:
        start = time.perf_counter()
        made[name] = workers[name].embed(batch)
        batches[name] = min(batches.get(name, float("inf")), time.perf_counter() - start)
    diff = max(diff, float(np.abs(made["onnxruntime"] - made["torch"]).max()))
    cosine = min(cosine, float((made["int8"] * made["onnxruntime"]).sum(axis=1).min()))
    after = {name: rss_mb(w.pid or 0) for name, w in workers.items()}
    for worker in workers.values():
        worker.close()

    lines = [
        "# MiniLM in the embedder worker: 8-bit weights, full precision, torch",
        "",
        machine(),
        f"Load average (1, 5, 15 min) at the start: {load_before}; at the end: "
        + ", ".join(f"{x:.1f}" for x in os.getloadavg())
        + " (2 cores, shared).",
        "",
        "The packaged all-MiniLM-L6-v2 in the embedder worker (as the server runs it), the three runtimes taking "
        "turns spawn by spawn and query by query. The ratio is the default (onnxruntime, 8-bit weights) against "
        f"full precision on onnxruntime. Vectors: 8-bit against full precision, lowest cosine {cosine:.4f}; full "
        f"precision against torch, largest difference {diff:.1e}.",
        "",
        "| measure | int8 (default) | onnxruntime | torch | int8 / onnxruntime |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines.append(_row(f"spawn to first vector (the first search's wait), median of {args.spawns}",
                      {n: statistics.median(v) for n, v in cold.items()}, "s", 2))  # fmt: skip
    lines.append(_row("worker RSS, loaded", loaded, "MB", 0))
    lines.append(_row("worker RSS, after all the encodes", after, "MB", 0))
    for kind, row in rows.items():
        lines.append(_row(f"{kind}: encode p50 wall", {n: row[n][0] for n in row}, "ms", 1))
        lines.append(_row(f"{kind}: worker CPU per encode (mean)", {n: row[n][1] for n in row}, "ms", 1))
    lines.append(_row("a batch of 256 skill texts, best of 2", batches, "s", 2))
    short = rows[kinds[0][0]]
    ok = short[DEFAULT][0] <= short[BASELINE][0] and short[DEFAULT][1] <= short[BASELINE][1]
    lines += ["", f"Result: {'pass' if ok else 'FAIL'} (8-bit no slower and no hungrier than full precision for a "
              "short query)."]  # fmt: skip
    write_report("\n".join(lines) + "\n", "embedder_runtime")
    return 0 if ok else 1


def _turn(names: list[str], i: int) -> list[str]:
    """`names` rotated by `i`: each runtime goes first, last and between in turn (none always after another)."""
    k = i % len(names)
    return names[k:] + names[:k]


def _row(label: str, values: dict[str, float], unit: str, digits: int) -> str:
    cells = " | ".join(f"{values[name]:.{digits}f} {unit}" for name in RUNTIMES)
    return f"| {label} | {cells} | {values[DEFAULT] / values[BASELINE]:.2f}x |"


if __name__ == "__main__":
    raise SystemExit(main())
