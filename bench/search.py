"""search_skills latency through an in-process MCP client at 1k, 10k and 100k skills, against a floor.

Floor (measured in the same run, on the same store and queries): one query encode with the same MiniLM model
(no cache) plus one raw Chroma `query(k=5)`; that is the least any vector search can cost here. The tool adds
the keyword side (FTS5), fusion, hydration, use counting and trajectory capture on top.

Filtered search (`language` + `tags`) at 100k is compared with Chroma's own `where` filter.

Stores are built once under `.bench-cache/search/` and reused. Embedding 100k texts with MiniLM on 2 cores takes
~20 minutes, so the stored vectors are made from 2,000 real MiniLM embeddings of base texts: each skill's
vector is a normalised mix of two base vectors plus small noise (so the HNSW index holds realistic, clustered,
distinct vectors), while every skill's text (what FTS5 indexes) is unique. Queries are the retrieval eval set's
real tracebacks (median 7 lines), each made distinct, so the embedding cache never answers them. The floor
embeds the query as given; the tool embeds the signal it extracts (the exception lines and the raising line),
which is part of its design.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from functools import partial
from pathlib import Path

import anyio
import numpy as np
from mcp import Client

from bench.common import ROOT, machine, write_report
from mcp_server.app import create_server
from mcp_server.services import build_deps
from mcp_server.settings import Settings
from skills_store.bank import SkillBank
from skills_store.embedders import make_embedder
from skills_store.embedders.minilm import MiniLMEmbedder
from skills_store.models import Skill

CACHE = ROOT / ".bench-cache" / "search"
EVALSET = ROOT / "bench" / "retrieval" / "evalset.jsonl"
LANGUAGES = ["python", "javascript", "go", "rust", "java"]
TAGS = [f"area-{i}" for i in range(50)]
ERRORS = [
    ("ModuleNotFoundError", "No module named '{w}'"),
    ("ImportError", "cannot import name '{W}' from '{w}'"),
    ("KeyError", "'{w}'"),
    ("AttributeError", "'NoneType' object has no attribute '{w}'"),
    ("TypeError", "{w}() got an unexpected keyword argument '{v}'"),
    ("ValueError", "invalid literal for int() with base 10: '{w}'"),
    ("FileNotFoundError", "[Errno 2] No such file or directory: '{w}.json'"),
    ("RuntimeError", "{w} changed size during iteration"),
    ("AssertionError", "assert {w} == {v}"),
    ("IndexError", "list index out of range in {w}"),
]
WORDS = [
    "config", "parser", "session", "cache", "router", "widget", "token", "schema", "loader", "client", "engine",
    "worker", "queue", "ledger", "invoice", "payload", "cursor", "buffer", "socket", "stream", "bucket", "tenant",
]  # fmt: skip


def skill_text(rng: random.Random, i: int) -> tuple[str, str, str]:
    etype, message = rng.choice(ERRORS)
    w, v = rng.choice(WORDS), rng.choice(WORDS)
    pattern = f"{etype}: " + message.format(w=f"{w}_{i}", W=w.capitalize(), v=v)
    title = f"{etype} in {w} {v} handling #{i}"
    strategy = f"Check the {w} before using the {v}; validate inputs in module {w}_{i % 997} and add a test."
    return title, pattern, strategy


def build_store(size: int, base_vectors: np.ndarray) -> Path:
    home = CACHE / f"store-{size}"
    if (home / "built").is_file():
        return home
    rng = random.Random(size)
    nrng = np.random.default_rng(size)
    with SkillBank.open(home, make_embedder("minilm")) as bank:
        batch: list[Skill] = []
        for i in range(size):
            title, pattern, strategy = skill_text(rng, i)
            batch.append(
                Skill(
                    skill_id=f"bench-{i}", title=title, pattern=pattern, strategy=strategy,
                    language=LANGUAGES[i % len(LANGUAGES)], tags=rng.sample(TAGS, 2),
                    confidence=round(rng.uniform(0.3, 0.95), 2),
                )
            )  # fmt: skip
            if len(batch) == 2000 or i == size - 1:
                a = base_vectors[nrng.integers(0, len(base_vectors), len(batch))]
                b = base_vectors[nrng.integers(0, len(base_vectors), len(batch))]
                vectors = 0.8 * a + 0.2 * b + nrng.normal(0, 0.02, a.shape).astype(np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                bank.store.upsert(batch, vectors)
                bank.catalog.upsert(batch, vectors)
                batch = []
        bank.catalog.set_meta("starter_seeded", "0")
    (home / "built").write_text(str(size))
    return home


def queries(n: int, seed: int) -> list[str]:
    """Real tracebacks (the retrieval eval set's, made by running broken snippets), each made distinct by a
    number added to its last (exception) line and shifted line numbers, so that no query is answered from the
    embedding cache."""
    rows = [json.loads(line) for line in EVALSET.read_text().splitlines() if line.strip()]
    tracebacks = [r["query"] for r in rows if r["kind"] == "traceback"]
    rng = random.Random(seed)
    out = []
    for i in range(n):
        shift = seed * 1000 + i
        text = rng.choice(tracebacks)
        text = re.sub(r"line (\d+)", partial(_shift_line, shift=shift), text.rstrip())
        out.append(f"{text} (case {shift})")
    return out


def _shift_line(match: re.Match[str], shift: int) -> str:
    return f"line {int(match.group(1)) + shift}"


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


async def time_tool(home: Path, texts: list[str], args: dict, *, cached: bool = False) -> list[float]:
    """Client-observed latency of search_skills; with `cached`, every query's embedding is cached first."""
    settings = Settings(home=home, embedder="minilm", starter_skills=False, workspace=CACHE)
    deps = build_deps(settings, tools=["search_skills"])
    out = []
    async with Client(create_server(deps, warmup_after_s=0.0)) as client:
        await client.call_tool("search_skills", {"query": "warm up the model", **args})
        for text in texts if cached else []:
            await client.call_tool("search_skills", {"query": text, **args})
        for text in texts:
            start = time.perf_counter()
            result = await client.call_tool("search_skills", {"query": text, **args})
            out.append((time.perf_counter() - start) * 1000)
            assert not result.is_error, result.content
    return out


def time_floor(home: Path, texts: list[str], where: dict | None = None, *, encode: bool = True) -> list[float]:
    """One encode (unless `encode` is False: vectors computed beforehand) plus one raw Chroma query(k=5)."""
    embedder = MiniLMEmbedder()
    with SkillBank.open(home, embedder) as bank:
        embedder.embed(["warm up"])
        vectors = None if encode else embedder.embed(texts)
        out = []
        for i, text in enumerate(texts):
            start = time.perf_counter()
            vec = embedder.embed([text])[0] if vectors is None else vectors[i]
            bank.store.query(vec, 5, where=where)
            out.append((time.perf_counter() - start) * 1000)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    base = MiniLMEmbedder().embed([" ".join(skill_text(random.Random(7 + i), i)) for i in range(2000)])
    rows = []
    for size in sizes:
        home = build_store(size, base)
        texts = queries(args.queries, seed=size)
        floor = time_floor(home, texts)
        tool = anyio.run(time_tool, home, queries(args.queries, seed=size + 1), {})
        rows.append((f"search_skills, {size:,} skills", tool, floor, 1.3 if size == 10_000 else None))
        print(f"{size}: tool p50 {pct(tool, 50):.1f} ms, floor p50 {pct(floor, 50):.1f} ms", flush=True)
    filtered = None
    if 100_000 in sizes:
        home = CACHE / "store-100000"
        where = {"$and": [{"language": "python"}, {"tag:area-7": True}]}
        filters = {"language": "python", "tags": ["area-7"]}
        chroma_where = time_floor(home, queries(50, seed=5), where=where, encode=False)
        tool = anyio.run(time_tool, home, queries(args.queries, seed=6), filters)
        tool_cached = anyio.run(lambda: time_tool(home, queries(args.queries, seed=7), filters, cached=True))
        filtered = (tool, tool_cached, chroma_where)
    write_report(render(rows, filtered, args.queries), "search")


def render(rows: list, filtered: tuple | None, n: int) -> str:
    lines = [
        "# search_skills latency",
        "",
        machine(),
        f"{n} distinct queries per row (real tracebacks), through an in-process `mcp.Client`; the floor is one",
        "MiniLM encode plus one raw Chroma `query(k=5)` on the same store. Vectors: see `bench/search.py`.",
        "Through a real `skillbank serve` over stdio, short queries and tracebacks: [search_stdio.md](search_stdio.md)",
        "(`python -m bench.search_stdio`).",
        "",
        "| case | p50 ms | p95 ms | floor p50 ms | floor p95 ms | p50 ratio | target | result |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, tool, floor, target in rows:
        ratio = pct(tool, 50) / pct(floor, 50)
        verdict = "-" if target is None else ("pass" if ratio <= target else "FAIL")
        lines.append(
            f"| {name} | {pct(tool, 50):.1f} | {pct(tool, 95):.1f} | {pct(floor, 50):.1f} | {pct(floor, 95):.1f} "
            f"| {ratio:.2f}x | {f'<= {target}x' if target else '-'} | {verdict} |"
        )
    if filtered:
        tool, cached, where = filtered
        lines += [
            "",
            "## Filtered search at 100,000 skills (`language=python`, `tags=[area-7]`, ~1% of the store)",
            "",
            "The target compares the filtered search with Chroma's own `where` filter, both given the query vector:",
            "the search_skills row with the query embedding already cached measures everything but the encode.",
            "",
            "| case | p50 ms | p95 ms | mean ms | target | result |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| Chroma `where` query (vector given) | {pct(where, 50):.1f} | {pct(where, 95):.1f} "
            f"| {statistics.fmean(where):.1f} | - | baseline |",
            f"| search_skills, both filters, query embedding cached | {pct(cached, 50):.1f} | {pct(cached, 95):.1f} "
            f"| {statistics.fmean(cached):.1f} | <= 20 ms | {'pass' if pct(cached, 50) <= 20 else 'FAIL'} |",
            f"| search_skills, both filters, end to end (encode included) | {pct(tool, 50):.1f} "
            f"| {pct(tool, 95):.1f} | {statistics.fmean(tool):.1f} | - | - |",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
