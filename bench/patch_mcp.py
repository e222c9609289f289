"""apply_patch through MCP against `git apply` through MCP, on real release diffs: `python -m bench.patch_mcp`.

What an agent pays per patch is the tool call, not the engine alone. Baseline: a minimal MCP stdio server (mcp 2.x
`MCPServer`, one tool that writes the patch to a temp file and runs `git apply`), which is what an agent would
otherwise call. Ours: `skillbank serve` over stdio, `apply_patch` with its capture (the step redacted and committed
to trajectories.db before the answer). Both servers are spawned once, by the same client, in the same run; each
trial applies the diff to a fresh copy of the older tree (copied before the clock starts), alternating the two
servers, and the tree afterwards must equal the newer release. The diffs: `diff -ruN` of two consecutive sdists
(bench.release_diffs, cached in `.bench-cache/patch/`). The exit status is 1 when the 2x target is missed.

The comparison runs in the system's temp dir, where a workspace would live on disk, and then again on tmpfs
(`/dev/shm`, when it is one): there creating and writing files costs almost nothing, which is what moves `git apply`
(it creates every file it changes) far more than `apply_patch` (it rewrites them in place). The tmpfs ratio is the
CPU's alone, the same on any disk; the target is judged on the first.
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
from bench.patch_mcp_notes import NOTES
from bench.proc_cpu import TICK_S, cpu_by_role, processes
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


def cpu_lines(cpu: dict[str, dict[str, float]], repeats: int) -> list[str]:
    """The report's table of CPU a round (the 8 diffs once) by process, each server's total and their ratio."""
    if not all(cpu.get(label) for label in ("git apply", "skillbank")):
        return ["", "CPU by process: not measured (no `/proc` here)."]
    lines = [
        "",
        "CPU a round in the run of the table above (the 8 diffs once; user + system time from `/proc`, the mean of "
        f"the {repeats} trials, in clock ticks of {TICK_S * 1000:.0f} ms: +-{TICK_S / repeats * 1000:.0f} ms), by "
        "process. The client is the same process for both and is left out:",
        "",
        "| server | process | CPU ms a round |",
        "| --- | --- | --- |",
    ]
    for label, used in cpu.items():
        lines += [f"| {label} | {role} | {sec / repeats * 1000:.0f} |" for role, sec in used.items()]
    ours, theirs = (sum(cpu[label].values()) / repeats for label in ("skillbank", "git apply"))
    lines += [
        f"| **skillbank, all** | | **{ours * 1000:.0f}** |",
        f"| **git apply, all** | | **{theirs * 1000:.0f}** |",
        "",
        f"skillbank's processes use {ours / theirs:.2f}x the CPU of the baseline's. The calls are sequential, so "
        "how much of it overlaps (the syntax worker and the redaction worker run beside the engine) is what keeps "
        "the wall-clock ratio below that.",
    ]
    return lines


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


async def run(cases: list[Case], base: Path, repeats: int) -> dict[str, dict[str, float]]:
    """Time every case through both servers; returns the CPU each server's processes used meanwhile, by role."""
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
        before = processes()
        servers = {
            label: next((p.pid for p in before.values() if p.ppid == os.getpid() and key in p.cmdline), None)
            for label, key in (("skillbank", "mcp_server"), ("git apply", hello.name))
        }
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
        after = processes()
    return {label: cpu_by_role(before, after, pid) if pid else {} for label, pid in servers.items()}


def breakdown(cases: list[Case], base: Path, repeats: int) -> dict[str, float]:
    """Seconds for all diffs, in this process: `git apply` alone, the engine with and without its syntax check,
    the capture of the call (the redacted, bounded step committed to a trajectory store, with its fsync) and the
    client's check of the result against the published output schema (what the Python SDK does on every call)."""
    from jsonschema.validators import validator_for
    from referencing import Registry

    from mcp_server.capture_text import CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS, CapturedArgs, redact_bounded
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


def totals(cases: list[Case]) -> dict[str, float]:
    """Seconds for all the diffs, per server: the sum of each diff's median trial."""
    return {label: sum(statistics.median(c.times[label]) for c in cases) for label in ("git apply", "skillbank")}


def render(
    cases: list[Case], repeats: int, load_before: str, parts: dict[str, float], extra: list[str]
) -> tuple[str, float]:
    total = totals(cases)
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
        *extra,
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


def tmpfs_dir(mounts: Path = Path("/proc/mounts")) -> str | None:
    """`/dev/shm` when `mounts` (Linux's mount table) lists it as a tmpfs, else None."""
    try:
        table = [line.split() for line in mounts.read_text().splitlines()]
    except OSError:
        return None
    return "/dev/shm" if any(fields[1:3] == ["/dev/shm", "tmpfs"] for fields in table) else None


def timed_run(
    repeats: int, where: str | None, *, parts: bool
) -> tuple[list[Case], dict[str, float], dict[str, dict[str, float]]]:
    """The cases timed through MCP with their workspaces under `where` (None: the system's temp dir), the
    in-process breakdown when `parts`, and the CPU the servers' processes used (`run`)."""
    with tempfile.TemporaryDirectory(prefix="skillbank-bench-patch-mcp-", dir=where) as tmp:
        base = Path(tmp)
        (base / "trees").mkdir()
        cases = prepare(base / "trees")
        cpu = anyio.run(run, cases, base, repeats)
        return cases, breakdown(cases, base, repeats) if parts else {}, cpu


def tmpfs_lines(cases: list[Case] | None, where: str | None) -> list[str]:
    if cases is None:
        return ["", "Not run on tmpfs: " + ("skipped (`--no-tmpfs`)." if where else "no tmpfs at /dev/shm here.")]
    total = totals(cases)
    same = all(all(c.identical.values()) for c in cases)
    return [
        "",
        f"The same comparison with both workspaces on tmpfs ({where}, no disk cost for either), in this run: "
        f"`git apply` via MCP {total['git apply'] * 1000:.1f} ms, `apply_patch` {total['skillbank'] * 1000:.1f} ms: "
        f"**{total['skillbank'] / total['git apply']:.2f}x** (the CPU's ratio alone; trees "
        f"{'identical' if same else 'DIFFER'}).",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-tmpfs", action="store_true", help="skip the second run on tmpfs")
    args = parser.parse_args(argv)
    load_before = load()
    cases, parts, cpu = timed_run(args.repeats, None, parts=True)
    shm = tmpfs_dir()
    on_tmpfs = timed_run(args.repeats, shm, parts=False)[0] if shm and not args.no_tmpfs else None
    extra = tmpfs_lines(on_tmpfs, shm) + cpu_lines(cpu, args.repeats)
    report, ratio = render(cases, args.repeats, load_before, parts, extra)
    print(report)
    write_report(report, "patch_mcp")
    failed = ratio > TARGET or not all(all(c.identical.values()) for c in [*cases, *(on_tmpfs or [])])
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
