"""apply_patch through MCP against `git apply` through MCP, on real release diffs: `python -m bench.patch_mcp`.

What an agent pays per patch is the tool call, not the engine alone. Baseline: a minimal MCP stdio server (mcp 2.x
`MCPServer`, one tool that writes the patch to a temp file and runs `git apply`), which is what an agent would
otherwise call. Ours: `skillbank serve` over stdio, `apply_patch` with its capture (the step redacted and committed
to trajectories.db before the answer). Both servers are spawned once, by the same client, in the same run; each
trial applies the diff to a fresh copy of the older tree (copied before the clock starts), alternating the two
servers, and the tree afterwards must equal the newer release. The diffs: `diff -ruN` of two consecutive sdists
(bench.release_diffs, cached in `.bench-cache/patch/`). The exit status is 1 when the 2x target is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench.common import ROOT, machine, write_report
from bench.release_diffs import diff_trees, files_of, sdist, unpack

PACKAGES: tuple[tuple[str, str, str], ...] = (
    ("attrs", "24.2.0", "24.3.0"),
    ("click", "8.1.7", "8.1.8"),
    ("packaging", "24.1", "24.2"),
    ("more-itertools", "10.4.0", "10.5.0"),
    ("idna", "3.7", "3.8"),
    ("tomli", "2.0.1", "2.0.2"),
    ("jinja2", "3.1.4", "3.1.5"),
    ("markupsafe", "3.0.1", "3.0.2"),
)
TARGET = 2.0

GIT_APPLY_SERVER = '''
import os, subprocess, sys, tempfile
from mcp.server.mcpserver import MCPServer

server = MCPServer("git-apply")
WORKSPACE = sys.argv[1]


@server.tool()
def git_apply(patch: str) -> str:
    """Apply a unified diff to the workspace with git apply."""
    with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False, encoding="utf-8") as f:
        f.write(patch)
    try:
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": os.path.dirname(WORKSPACE)}
        done = subprocess.run(["git", "apply", "-p1", "--whitespace=nowarn", f.name], cwd=WORKSPACE, env=env,
                              capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if done.returncode:
        raise ValueError(done.stderr)
    return "applied"


server.run()
'''


@dataclass
class Case:
    name: str
    versions: str
    old: Path
    expected: dict[str, bytes]
    patch: str
    files: int
    times: dict[str, list[float]] = field(default_factory=lambda: {"git apply": [], "skillbank": []})
    identical: dict[str, bool] = field(default_factory=lambda: {"git apply": True, "skillbank": True})


NOTES = """\
The fourth round (2026-12-01 14:30-15:40 UTC, around the engine; through MCP, the drive of 15-20 rounds of the 8
diffs against one `skillbank serve`, each setting alternating with the other in runs a minute apart. This VM's
load average counts tasks waiting on the disk, so it read 3-30 while the CPUs were mostly idle):

- The capture's redaction of a long argument runs in a redaction worker (`mcp_server/redact_worker.py`, plain
  Python, 13 MB) while the engine works; the server redacts in-process whenever the worker cannot answer. Three
  alternating runs: 139.5-143.1 ms in-process, 127.9-137.2 with the worker (its row above: the part of the capture
  left after the tool, 8.7 ms, against 20.8 in-process).
- A short text holding no needle is scanned only with the rules that have none: the summary of a 262-file patch
  is redacted in 1.95 ms instead of 3.8 (the output is the same on 61,799 texts).
- The syntax and redaction workers run as `SCHED_BATCH` tasks, so the server's wake-ups no longer hand them the
  core the server runs on. Six alternating runs: 129.4-138.4 -> 123.1-130.3 ms.
- Against the code before this session (c7413f3), four alternating runs: 149.1-158.0 -> 133.8-137.4 ms.
- Not done: the commit's fsync (3.7 ms a round) stays, so the step is durable before the answer. The client's
  schema check (10.9 ms) would lose 2.4 ms if null `old_path` and `mode` were left out, which changes what clients
  see. The write of a request to a worker, or of a response to the client, averages 0.2-0.65 ms against a 0.03 ms
  median: the woken process takes the writer's core (SCHED_BATCH removed that for the workers; the client is
  not ours to change).

The third round (2026-12-01 14:30-15:30 UTC, the engine only; the lead's runs on the same 2 cores, load 0.6 to 43,
so the engine's own work was counted in instructions: callgrind, a round of the 8 diffs, its 3-round run less its
1-round run, deterministic whatever the load):

- With the syntax worker, the sections naming a `.py` file are planned as they are parsed and the others once the
  parse is done (a release diff lists its docs and config before its first module): the worker's first job is sent
  after 6.6 ms of the 8 diffs' engine time instead of 13.0. The plan is the one of patch order (files, changes and
  warnings are listed in patch order); a file looked up by sections of both kinds, a refusal or an error plans the
  whole patch again in patch order (`tests/sandbox/patch/test_patch_order.py`). In one process, alternating per
  diff, 21 rounds, load 0.6: 80.9 -> 77.7 ms.
- The engine without the syntax check: 433 -> 345 M instructions a round (-20%): a plain path checked in one regex
  pass (a property test against the part-by-part check), a directory resolved from its parent's real path in one
  `lstat` (`realpath` took one per component), one `lstat` per file for the link check and the read, `os.read`
  (433 -> 412); the splice's line-ending repair found in C (it walked every line of every file: 412 -> 401); a
  hunk's changed ranges tracked as runs and its added lines' ending decided once (401 -> 382; identical on all
  3,936 hunk x ending variants of the 8 diffs); the parser's per-line work (382 -> 371) and a counted hunk built in
  the pass that counts it (the parse alone 136 -> 127 M; identical sections or errors on the 8 diffs and 60,000
  random patches); the commit and the bytecode sweep on strings, not Paths (371 -> 355).
- The block finder of the syntax check (both processes): 188 -> 153 M instructions over the 79 split files, its
  patterns turning most lines away on their first character and a block's "holds a changed line" one bisection;
  the same chunks as before on 39,404 files x random changed ranges of site-packages and the standard library.
- Wall, in-process, the code before and after as separate processes alternating, 5 pairs of 9 rounds each, load
  0.7-0.8: 92.1 -> 79.7 ms for the 8 diffs with the worker (-12.4 ms, -13%); under a load of 5-7: 88.7 -> 78.5.
  This benchmark at 15:16 UTC (load 0.7, all but the parser's one-pass change) against its 13:47 run: the engine
  as served 86.6 -> 76.2 ms, without the check 70.9 -> 55.7; through MCP 145.1 -> 135.6 ms, 2.52x -> 2.50x (the
  `git apply` server itself 57.5 -> 54.3 ms).
  What bounds a diff now is one side or the other: the main process for those with many files that are not Python
  (attrs, click: parse, read, splice and ~12 syscalls a file to write it atomically), the worker for those with
  big modules (packaging, jinja2: `compile()`, 77% of the check's instructions, its parser most of that). With
  the check in-process the whole engine went 1,138 -> 1,015 M instructions a round.
- Not kept: staging the temp files from a background thread (the staging thread waits for the GIL the planning
  holds: 25.6 ms sequential vs 26.3 threaded in a micro-benchmark of 262 files); staging them in the syntax worker
  (every file: 74.1 -> 75.3 ms; the `.py` files only, whose bytes it has already: 74.5), as the main process's
  `pwrite` and ticket per file cost about what the temp-file syscalls they replace cost; one regex for the block
  lines and the triple quotes (slower than the two scans: no literal prefix to search for).

The second round (2026-12-01 13:00-14:30 UTC, another helper's benchmarks on the same 2 cores, load 0.6 to 35:
every comparison is within one run, alternating):

- The syntax check runs in a persistent worker process (`sandbox/syntax_worker.py`, spawned by the first patch
  that names a `.py` file, reused, gone with the server) while the engine plans and writes; the engine then
  compiles the files nobody took yet itself, one ticket at a time so the worker goes on taking its share (taking
  them all at once left the worker idle: packaging 19.8 -> 14.9 ms, jinja2 23.2 -> 18.3). In-process, per diff,
  9 alternating trials, load 0.3: the engine with the check 128.6 ms in-process vs 80.7 ms with the worker (58.9
  without the check). Even a one-line patch to click's `core.py` gains (1.9 vs 2.2 ms, median of 41), so every
  patch naming a `.py` file uses it; when the engine took every job itself, the worker's empty answer is read
  before the next patch instead of waited for.
- The engine plans each section as soon as it is parsed (a parse error still wins over what planning raised),
  so the worker gets its first file before the whole patch is parsed (15 ms of the 8 diffs' 60).
- Through MCP, the servers before and after these changes and the `git apply` one alternating (7 trials, load
  0.3-0.4): 212.4 -> 161.8 ms for the 8 diffs, 3.82x -> 2.91x `git apply` via MCP (55.6 ms). Under a load of
  9-12 (5 trials, an earlier state) it read 258 -> 226 ms, 2.21x -> 1.93x, only because `git apply`'s own time
  grew more under that load.
- Not kept: the hunk splice run by run instead of line by line (regex runs, list comprehensions): no faster on
  hunks of ~20 lines; the parser's line loop as a comprehension: 4.5 -> 3.8 ms, not worth the second path; temp
  files named by pid and counter instead of `mkstemp`: 0.8 ms of 16 for 262 files (the syscalls are the cost).
- Not done (outside the engine): the capture redacts the patch's kept window (10.6 ms for the 8 calls in-process)
  and commits the step (7.3 ms, with its fsync) after the tool returns, while the worker could redact in parallel
  (a hook for a tool to hand the capture args it has already bounded and redacted with the capture's own
  function). The client's schema check would cost 7.9 instead of 10.3 ms if `old_path` and `mode` were left out
  of a file's entry when null, but `tests/mcp_server/test_exec_tools.py` pins them in the structured content.

The first round (2026-12-01; measured under a load of 3-5, a local model on both cores, so every comparison is
within one run):

- The syntax check is `compile()` of the blocks holding changed lines (17,347 lines in 248 blocks of 79 files for
  these diffs), the largest part after the writes. Finding the blocks looks at top-level `def`/`class`/decorator
  lines first, and at a class's other lines only when the patch changed that class: 27.2 -> 18.2 ms for the 8
  diffs (best of 7), the same blocks as before on 13,295 files (site-packages and the standard library). The
  blocks are those holding lines a hunk added or removed, no longer those holding only its context lines: 15,415
  lines compiled instead of 17,347 (970 mutations applied as patches: 768 of 768 errors reported identically).
- Not kept: `symtable` (parser and symbol table, no code generation) instead of `compile()` for the blocks that
  cannot hold an error only the code generator reports: 35 vs 51 ms on the same 248 blocks, but 136 of them hold
  what the code generator checks (`return`, `yield`, `await`, `async`, `break`, `continue`, starred targets,
  repeated keyword arguments, a bare `except:`, `__debug__`, `case`, `__future__`, 20 nested blocks), mostly
  `return`. The other 112 are 14% of the compile time (at most ~4% saved) and scanning for those constructs cost
  more than the compile (127 vs 97 ms). The block-wise check is tested against a full compile on the 27 kinds of
  code-generator-only error (`tests/sandbox/test_syntax_codegen.py`) and on 2,820 mutations of 1,500
  site-packages files: 2,259 of 2,260 errors reported identically, the other outside the blocks the mutation
  touched (not reported, as documented).
- The Python SDK client checks each result against the output schema with `jsonschema`; its `$ref`s and the
  `anyOf` of nullable fields cost it ~3.6 ms a release diff. The schema is published flat (same validation):
  28.7 -> 15.5 ms for the 8 calls.
- The capture redacts a long patch only in the head and tail it stores (2/3 and 1/3 of 20,000 characters, each
  with a 4,000-character margin on its cut side: 28k characters, not 32k), and the marker gives the number of
  characters left out (it gave the redacted window's: 12,040 for a 200 KB patch). The commit's fsync (3-4 ms a
  call on this disk) stays: the step is durable before the answer.
- What the server costs besides the engine (ad hoc runs, medians of 7 trials, 8 calls, the engine replaced by its
  stored result, against a no-op MCP tool taking the same patch in the same run): 74 vs 23 ms (89 vs 26 in a second
  run); without the commit's fsync 66 vs 20; without the redaction too 34 vs 15, the rest mostly the client's
  schema check.
- Against the code before these changes (7 trials, the two alternating, load ~3): skillbank 467 and 463 ms before,
  383 and 399 ms after, for the 8 diffs (-16%); the ratios, 2.76x and 2.90x before, 3.09x and 2.09x after, move
  with `git apply`'s own time, which went from 124 to 191 ms between runs.
- Not kept: the syntax check of big patches in a forked child while the parent writes the files (a thread cannot
  overlap them: `compile()` holds the GIL). In-process, alternating, 3 rounds: 253, 238, 208 ms with the fork vs
  156, 160, 212 ms without; the fork and the copy-on-write faults of both processes cost more than the overlap
  saves. (A persistent worker is sent the changed files instead: see the second round above.)
"""


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def prepare(root: Path) -> list[Case]:
    cases = []
    for name, v_old, v_new in PACKAGES:
        old = unpack(sdist(name, v_old), root / f"{name}-{v_old}")
        new = unpack(sdist(name, v_new), root / f"{name}-{v_new}")
        patch = diff_trees(root, old.name, new.name).decode("utf-8", "replace")
        files = sum(1 for line in patch.splitlines() if line.startswith("diff -ruN "))
        cases.append(Case(name, f"{v_old} -> {v_new}", old, files_of(new), patch, files))
    return cases


def refill(work: Path, source: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work, symlinks=True)


async def run(cases: list[Case], base: Path, repeats: int) -> None:
    env = {**os.environ, "SKILLBANK_HOME": str(base / "home"), "GIT_CEILING_DIRECTORIES": str(base)}
    hello = base / "git_apply_server.py"
    hello.write_text(GIT_APPLY_SERVER)
    ws = {"git apply": base / "ws-git", "skillbank": base / "ws-skillbank"}
    for path in ws.values():
        path.mkdir()
    ours = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_server", "serve", "--workspace", str(ws["skillbank"])], env=env,
        cwd=str(ROOT),
    )  # fmt: skip
    bare = StdioServerParameters(command=sys.executable, args=[str(hello), str(ws["git apply"])], env=env)
    async with Client(ours) as skillbank, Client(bare) as git:
        calls = {
            "git apply": lambda patch: git.call_tool("git_apply", {"patch": patch}),
            "skillbank": lambda patch: skillbank.call_tool("apply_patch", {"patch": patch}),
        }
        for label in calls:  # warm both servers (first-call imports) on a small patch
            case = cases[-1]
            refill(ws[label], case.old)
            await calls[label](case.patch)
        for case in cases:
            for i in range(repeats):
                labels = list(calls) if i % 2 == 0 else list(calls)[::-1]
                for label in labels:
                    work = ws[label]
                    await anyio.to_thread.run_sync(refill, work, case.old)
                    start = time.perf_counter()
                    result = await calls[label](case.patch)
                    case.times[label].append(time.perf_counter() - start)
                    ok = not result.is_error and files_of(work) == case.expected
                    case.identical[label] = case.identical[label] and ok


def breakdown(cases: list[Case], base: Path, repeats: int) -> dict[str, float]:
    """Seconds for all diffs, in this process: `git apply` alone, the engine with and without its syntax check,
    the capture of the call (the redacted, bounded step committed to a trajectory store, with its fsync) and the
    client's check of the result against the published output schema (what the Python SDK does on every call)."""
    from jsonschema.validators import validator_for
    from referencing import Registry

    from mcp_server.capture import CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS
    from mcp_server.capture_text import CapturedArgs, redact_bounded
    from mcp_server.redact_worker import RedactWorker
    from mcp_server.toolset import flat_schema
    from sandbox.patch import PatchResult, apply_patch
    from sandbox.syntax_worker import SyntaxWorker
    from skills_store.models import Step
    from skills_store.redact import Redactor
    from skills_store.trajectories.store import SQLiteTrajectoryStore

    work, red = base / "ws-breakdown", Redactor()
    schema = flat_schema(PatchResult.model_json_schema())
    validator = validator_for(schema)(schema, registry=Registry())
    worker = SyntaxWorker()
    engine: dict[str, dict[str, Any]] = {
        "engine, no syntax check": {"check_syntax": False},
        "engine with the syntax check in-process": {},
        "engine with the syntax check in the worker (as served)": {"syntax_worker": worker},
    }
    served = "capture as served: after the tool, arguments redacted by the redaction worker meanwhile"
    out = dict.fromkeys(
        ["git apply alone (no MCP)", *engine, "capture: redact + commit, in-process", served, "client: output schema"],
        0.0,
    )
    redact_worker = RedactWorker(red)
    assert redact_worker.wait_ready(30)
    diff = base / "breakdown.diff"
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(base)}
    with SQLiteTrajectoryStore(base / "breakdown.db") as store:
        tid = store.create().trajectory_id
        for case in cases:
            runs: dict[str, list[float]] = {label: [] for label in out}
            diff.write_text(case.patch, encoding="utf-8")
            for _ in range(repeats):
                refill(work, case.old)
                start = time.perf_counter()
                subprocess.run(["git", "apply", "-p1", "--whitespace=nowarn", str(diff)], cwd=work, env=env, check=True)
                runs["git apply alone (no MCP)"].append(time.perf_counter() - start)
                for name, options in engine.items():
                    refill(work, case.old)
                    if "syntax_worker" in options:  # ready (the served engine starts it with its first patch)
                        assert worker.wait_ready(30)
                        captured = CapturedArgs(red, redact_worker, {"patch": case.patch, "dry_run": False})
                    start = time.perf_counter()
                    result = apply_patch(work, case.patch, **options)
                    runs[name].append(time.perf_counter() - start)
                summary = {"applied": True, "files": [{"action": f.action, "path": f.path} for f in result.files]}
                start = time.perf_counter()
                args = redact_bounded(red, {"patch": case.patch}, CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)
                step = Step(kind="tool_call", tool="apply_patch", args=args, result=red.redact(summary))
                store.append(tid, [step])
                runs["capture: redact + commit, in-process"].append(time.perf_counter() - start)
                start = time.perf_counter()
                step = Step(kind="tool_call", tool="apply_patch", args=captured.stored(2.0), result=red.redact(summary))
                store.append(tid, [step])
                runs[served].append(time.perf_counter() - start)
                structured = result.model_dump(mode="json")
                start = time.perf_counter()
                assert not list(validator.iter_errors(structured))
                runs["client: output schema"].append(time.perf_counter() - start)
            for name, times in runs.items():
                out[name] += statistics.median(times)
    worker.close()
    redact_worker.close()
    return out


def render(cases: list[Case], repeats: int, load_before: str, parts: dict[str, float]) -> tuple[str, float]:
    total = {label: sum(statistics.median(c.times[label]) for c in cases) for label in ("git apply", "skillbank")}
    ratio = total["skillbank"] / total["git apply"]
    lines = [
        "# apply_patch through MCP vs git apply through MCP",
        "",
        machine(),
        f"Load average (1, 5, 15 min) at the start: {load_before}; at the end: {load()} (2 cores, shared).",
        "",
        f"Client-observed `call_tool` time over stdio, median of {repeats} alternating trials per diff, each on a "
        "fresh "
        "copy of the older release; `skillbank` includes the syntax check of the changed `.py` files and the "
        "redacted, committed trajectory step.",
        "",
        "| package | versions | files | patch KB | git apply via MCP ms | skillbank apply_patch ms | ratio | trees |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in cases:
        g, s = (statistics.median(c.times[label]) for label in ("git apply", "skillbank"))
        same = "identical" if all(c.identical.values()) else f"differs ({c.identical})"
        lines.append(
            f"| {c.name} | {c.versions} | {c.files} | {len(c.patch.encode()) / 1024:.0f} | {g * 1000:.1f} | "
            f"{s * 1000:.1f} | {s / g:.2f}x | {same} |"
        )
    lines += [
        f"| **all 8** | | {sum(c.files for c in cases)} | {sum(len(c.patch.encode()) for c in cases) / 1024:.0f} | "
        f"{total['git apply'] * 1000:.1f} | {total['skillbank'] * 1000:.1f} | **{ratio:.2f}x** | |",
        "",
        f"Target: <= {TARGET:.0f}x in total: {ratio:.2f}x, {'pass' if ratio <= TARGET else 'FAIL'}.",
        "",
        "Where skillbank's time goes (all 8 diffs, medians, in-process, same run):",
        "",
        "| part | ms | share of git apply via MCP |",
        "| --- | --- | --- |",
        *[f"| {label} | {sec * 1000:.1f} | {sec / total['git apply']:.2f}x |" for label, sec in parts.items()],
        "",
        NOTES,
    ]
    return "\n".join(lines), ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    load_before = load()
    with tempfile.TemporaryDirectory(prefix="skillbank-bench-patch-mcp-") as tmp:
        base = Path(tmp)
        (base / "trees").mkdir()
        cases = prepare(base / "trees")
        anyio.run(run, cases, base, args.repeats)
        parts = breakdown(cases, base, args.repeats)
    report, ratio = render(cases, args.repeats, load_before, parts)
    print(report)
    write_report(report, "patch_mcp")
    failed = ratio > TARGET or not all(all(c.identical.values()) for c in cases)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
