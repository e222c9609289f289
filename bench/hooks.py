"""Claude Code hook latency: `python -m bench.hooks`.

Runs the hook as Claude Code does, one process per event with the event JSON on stdin, against a temp
SKILLBANK_HOME whose catalog holds the starter pack: 40 capture events (PostToolUse) and 40 injection events
(UserPromptSubmit, which searches the catalog and prints additionalContext). Baseline, same run: the bare
interpreter start (`python -c pass`). Targets: capture p50 <= 300 ms, injection p50 <= 1 s.
Results go to `docs/benchmarks/hooks.md`; exit status 1 if a target is missed.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
OUT = REPO_ROOT / "docs" / "benchmarks" / "hooks.md"
RUNS = 40
CAPTURE_P50_MS, INJECT_P50_MS = 300.0, 1000.0
PROMPTS = [
    "ImportError: cannot import name 'Config' from partially initialized module 'app.settings'",
    "tests fail with ModuleNotFoundError: No module named 'requests'",
    "KeyError: 'user_id' when parsing the webhook payload",
    "pytest: fixture 'tmp_dir' not found",
]


def hook_command() -> list[str]:
    """`skillbank hook claude` when the CLI root has the hook group, else the same Typer app run directly."""
    exe = shutil.which("skillbank", path=str(Path(sys.executable).parent))
    probe = subprocess.run([exe or "skillbank", "hook", "--help"], capture_output=True) if exe else None
    if probe is not None and probe.returncode == 0:
        return [exe, "hook", "claude"]  # type: ignore[list-item]
    return [sys.executable, "-c", "from mcp_server.cli.hook import app; app()", "claude"]


def seed_catalog(home: Path) -> int:
    from skills_store.bank import SkillBank
    from skills_store.embedders import make_embedder
    from skills_store.starter import seed_if_new

    bank = SkillBank.open(home, make_embedder("hash"))
    try:
        seed_if_new(bank)
        bank.flush()
        return bank.count()
    finally:
        bank.close()


def timed(cmd: list[str], stdin: str, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, cwd=REPO_ROOT)
    elapsed = (time.perf_counter() - t0) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"hook failed: {done.stderr}")
    return elapsed, done.stdout


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        skills = seed_catalog(home)
        env = {**os.environ, "SKILLBANK_HOME": str(home)}
        cmd = hook_command()
        base = [timed([sys.executable, "-c", "pass"], "", env)[0] for _ in range(RUNS)]
        capture, inject, hits = [], [], 0
        for i in range(RUNS):
            event = {"session_id": "bench-session", "cwd": tmp, "hook_event_name": "PostToolUse", "tool_name": "Edit"}
            event |= {"tool_input": {"file_path": f"src/m{i}.py", "old_string": "a", "new_string": "b"}}
            capture.append(timed(cmd, json.dumps(event | {"tool_response": {"filePath": "x"}}), env)[0])
            prompt = {"session_id": f"bench-{i}", "cwd": tmp, "hook_event_name": "UserPromptSubmit"}
            ms, out = timed(cmd, json.dumps(prompt | {"prompt": PROMPTS[i % len(PROMPTS)]}), env)
            inject.append(ms)
            hits += bool(out.strip()) and "additionalContext" in out
    rows = [
        ("baseline: `python -c pass`", base),
        ("capture (PostToolUse)", capture),
        ("injection (UserPromptSubmit, catalog search)", inject),
    ]
    checks = [
        (f"capture p50 <= {CAPTURE_P50_MS:.0f} ms", statistics.median(capture) <= CAPTURE_P50_MS),
        (f"injection p50 <= {INJECT_P50_MS:.0f} ms", statistics.median(inject) <= INJECT_P50_MS),
    ]
    b50 = statistics.median(base)
    table = "\n".join(
        f"| {name} | {statistics.median(v):.0f} | {pct(v, 95):.0f} | {statistics.median(v) / b50:.1f}x |"
        for name, v in rows
    )
    shown = " ".join(cmd[:3] if cmd[0] == sys.executable else cmd)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        f"""# Claude Code hook latency (`python -m bench.hooks`)

Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()};
load average at the end {os.getloadavg()[0]:.1f} (the machine is shared; figures vary with it).
Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Command: `{shown}`.
Catalog: the starter pack ({skills} skills); {RUNS} runs of each; one process per event, as Claude Code runs it.

| event | p50 ms | p95 ms | p50 vs baseline |
| --- | --- | --- | --- |
{table}

Injection printed additionalContext in {hits} of {RUNS} prompts.

| target | result |
| --- | --- |
"""
        + "\n".join(f"| {name} | {'pass' if ok else 'FAIL'} |" for name, ok in checks)
        + "\n"
    )
    print(OUT.read_text())
    sys.exit(0 if all(ok for _, ok in checks) else 1)


if __name__ == "__main__":
    main()
