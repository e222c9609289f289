"""Heuristic distiller throughput (`python -m bench.distill [N]`): trajectories per second.

N synthetic closed trajectories (default 2,000) are written to a fresh SQLite trajectory store, shaped like what
the MCP server captures: searches, thoughts, failing `run_tests` with failure messages, `apply_patch` with real
diffs, passing runs; a mix of fixes of five kinds, pitfalls and sessions with nothing to learn. Measured in the same
run:

- baseline: reading them back with their steps (`pending_for`), which every pass has to do anyway;
- the heuristic distiller alone over the loaded trajectories (episodes, signatures, change kinds, drafts);
- a whole `distill_pending` pass: read, distill, merge into a skill bank (hash embedder), mark processed.

Writes docs/benchmarks/distill.md; exits 1 when a target is missed.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from bench.common import machine, write_report
from skills_store.bank import SkillBank
from skills_store.distill.heuristic import HeuristicDistiller
from skills_store.distill.names import installed_modules
from skills_store.distill.runner import distill_pending
from skills_store.embedders import make_embedder
from skills_store.models import Outcome, Step
from skills_store.trajectories.store import SQLiteTrajectoryStore

TARGET_DISTILL_TPS = 500.0
TARGET_PASS_TPS = 50.0
NAMES = ["items", "orders", "users", "payload", "config", "rows", "values", "totals", "cart", "events"]


def _patch(path: str, old: str, new: str, context: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@ {context}\n {context}\n-{old}\n+{new}\n     pass\n"


def _fix(rng: random.Random) -> tuple[str, str, str, str]:
    """(error line, path:line, patch, file) of one of five fix kinds, with random names."""
    name = rng.choice(NAMES)
    path = f"app/{rng.choice(NAMES)}_{rng.randrange(100)}.py"
    kind = rng.randrange(5)
    if kind == 0:
        typo = name[:-1]
        return (
            f"NameError: name '{typo}' is not defined",
            f"{path}:2",
            _patch(path, f"    return len({typo})", f"    return len({name})", f"def count({name}):"),
            path,
        )
    if kind == 1:
        return (
            f"KeyError: '{name}'",
            f"{path}:7",
            _patch(path, f"    return data['{name}']", f"    return data.get('{name}')", "def read(data):"),
            path,
        )
    if kind == 2:
        return (
            f"NameError: name '{name}' is not defined",
            f"{path}:1",
            f"--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,3 @@\n+from app import {name}\n def f():\n     return {name}\n",
            path,
        )
    if kind == 3:
        return (
            "AttributeError: 'NoneType' object has no attribute 'get'",
            f"{path}:4",
            _patch(
                path,
                f"    return {name}.get('id')",
                f"    return {name}.get('id') if {name} is not None else None",
                f"def ident({name}):",
            ),
            path,
        )
    return ("IndexError: list index out of range", f"{path}:9",
            _patch(path, f"    for i in range(len({name}) + 1):", f"    for i in range(len({name})):", "def walk():"),
            path)  # fmt: skip


def _steps(rng: random.Random) -> tuple[list[Step], Outcome]:
    noise = [
        Step(kind="thought", content="Let me look at the failing test and the code it calls. " * 3),
        Step(kind="tool_call", tool="search_skills", args={"query": "error"}, result={"returned": ["sk-1"]}, ok=True),
        Step(kind="message", content="Working on it."),
    ]
    shape = rng.random()
    if shape < 0.15:
        return noise * 3, "success"
    error, where, patch, path = _fix(rng)
    test_id = f"tests/test_{path.split('/')[-1]}::test_{rng.randrange(50)}"
    message = f"{error}\n>       ...\nE       {error}\n\n{where}: {error.split(':')[0]}"
    failing = Step(
        kind="tool_call", tool="run_tests", args={"tests": None}, ok=False,
        result={"status": "failed", "failing": [test_id], "failures": [{"id": test_id, "message": message}]},
    )  # fmt: skip
    patched = Step(
        kind="tool_call", tool="apply_patch", args={"patch": patch, "dry_run": False}, ok=True,
        result={"applied": True, "files": [f"modify {path}"], "fuzzy": False, "syntax_errors": 0},
    )  # fmt: skip
    passing = Step(kind="tool_call", tool="run_tests", args={"tests": None}, ok=True, result={"status": "passed"})
    if shape < 0.3:
        return [*noise, failing, *noise, patched, failing, *noise], "failure"
    return [*noise, failing, *noise, patched, *noise, passing], "success"


def build(store: SQLiteTrajectoryStore, n: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    total = 0
    for i in range(n):
        steps, outcome = _steps(rng)
        tid = store.create(trajectory_id=f"bench-{i:06d}", repo=f"acme/repo{i % 5}").trajectory_id
        store.append(tid, steps)
        store.close_trajectory(tid, outcome)
        total += len(steps)
    return total


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    n = int(args[0]) if args else 2000
    with tempfile.TemporaryDirectory(prefix="skillbank-bench-distill-") as tmp:
        home = Path(tmp)
        store = SQLiteTrajectoryStore(home / "trajectories.db")
        steps = build(store, n)

        t0 = time.perf_counter()
        loaded = store.pending_for("heuristic", limit=n)
        read_s = time.perf_counter() - t0

        distiller = HeuristicDistiller()
        installed_modules()  # read once per process (about a second): not part of the per-trajectory cost
        t0 = time.perf_counter()
        drafts = distiller.distill(loaded)
        distill_s = time.perf_counter() - t0

        bank = SkillBank.open(home / "bank", make_embedder("hash"))
        t0 = time.perf_counter()
        report = distill_pending(store, bank, distiller, batch=200)
        pass_s = time.perf_counter() - t0
        skills = bank.count()
        bank.close()
        store.close()

    read_tps, distill_tps, pass_tps = n / read_s, n / distill_s, n / pass_s
    ok_distill, ok_pass = distill_tps >= TARGET_DISTILL_TPS, pass_tps >= TARGET_PASS_TPS
    report_md = f"""# Heuristic distiller throughput (`python -m bench.distill`)

{machine()}
{n:,} synthetic closed trajectories ({steps:,} steps; fixes of five kinds, pitfalls, and sessions with nothing to
learn), in a fresh SQLite trajectory store. Skill bank: embedded Chroma + catalog with the hash embedder.

| measure | trajectories/s | seconds |
| --- | --- | --- |
| baseline: read back with steps (`pending_for`) | {read_tps:,.0f} | {read_s:.2f} |
| heuristic distiller alone (drafts from loaded trajectories) | {distill_tps:,.0f} | {distill_s:.2f} |
| whole pass (`distill_pending`: read, distill, merge into the bank, mark) | {pass_tps:,.0f} | {pass_s:.2f} |
| distiller time / read time | {distill_s / read_s:.2f} | |

The pass made {report.drafts:,} drafts from {report.trajectories:,} trajectories: {len(report.added):,} new
skills, {len(report.merged):,} merged into existing ones ({skills:,} skills stored; the distiller alone made
{len(drafts):,} drafts).

| target | result |
| --- | --- |
| heuristic distiller >= {TARGET_DISTILL_TPS:,.0f} trajectories/s | {"pass" if ok_distill else "MISS"} |
| whole pass >= {TARGET_PASS_TPS:,.0f} trajectories/s | {"pass" if ok_pass else "MISS"} |

The whole pass is bounded by the merge: one embedding call per batch, one nearest-neighbour query (or, for a lesson
with an edit rule, one lookup of its lesson tag) per draft that is not a duplicate of an earlier draft in its batch,
and one Chroma upsert plus one update per batch. The distiller reads each trajectory's names (which are the user's
own), tokenizes and aligns the fixing patch's lines for its edit rule, and abstracts each signature with them; the
installed distributions' import names are read once per process, before the timing. With MiniLM instead of the
hash embedder the merge also pays for embedding each draft (a few ms each on CPU).
"""
    write_report(report_md, "distill")
    print(report_md)
    return 0 if ok_distill and ok_pass else 1


if __name__ == "__main__":
    sys.exit(main())
