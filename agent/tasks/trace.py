"""Which lines of a project its tests execute: one pytest run under a small line tracer (no coverage package).

Mutating a line no test runs gives a mutant no test can kill, so synthesis only mutates traced lines. The tracer
is a pytest plugin written to a temp dir and loaded with `-p`; it traces only frames of files under the repo.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from agent.tasks.errors import TraceError

PLUGIN = """
import json, os, sys, threading
_ROOT = os.path.realpath(os.environ["SKILLBANK_TRACE_ROOT"]) + os.sep
_LINES = {}
_KEEP = {}


def _local(frame, event, arg):
    if event == "line":
        _LINES[frame.f_code.co_filename].add(frame.f_lineno)
    return _local


def _global(frame, event, arg):
    name = frame.f_code.co_filename
    keep = _KEEP.get(name)
    if keep is None:
        keep = _KEEP[name] = os.path.realpath(name).startswith(_ROOT)
        if keep:
            _LINES.setdefault(name, set())
    if not keep:
        return None
    _LINES[name].add(frame.f_lineno)
    return _local


def pytest_configure(config):
    threading.settrace(_global)
    sys.settrace(_global)


def pytest_unconfigure(config):
    sys.settrace(None)
    merged = {}
    for name, lines in _LINES.items():
        rel = os.path.relpath(os.path.realpath(name), _ROOT).replace(os.sep, "/")
        merged.setdefault(rel, set()).update(lines)
    with open(os.environ["SKILLBANK_TRACE_OUT"], "w") as out:
        json.dump({k: sorted(v) for k, v in merged.items()}, out)
"""


def traced_lines(repo: Path, python: str, *, timeout_s: float = 600) -> dict[str, set[int]]:
    """{repo-relative path: executed line numbers} over the whole test suite of `repo`."""
    with tempfile.TemporaryDirectory(prefix="sb-trace-") as tmp:
        plugin_dir = Path(tmp)
        (plugin_dir / "_skillbank_trace.py").write_text(PLUGIN, encoding="utf-8")
        out = plugin_dir / "lines.json"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in (str(plugin_dir), os.environ.get("PYTHONPATH", "")) if p),
            "PYTHONDONTWRITEBYTECODE": "1",
            "SKILLBANK_TRACE_ROOT": str(repo),
            "SKILLBANK_TRACE_OUT": str(out),
        }
        argv = [python, "-m", "pytest", "-q", "-p", "_skillbank_trace", "-p", "no:cacheprovider", "--no-header"]
        try:
            run = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise TraceError(f"the traced test run took over {timeout_s:.0f} s") from exc
        if not out.is_file():
            tail = (run.stdout + run.stderr)[-1500:]
            raise TraceError(f"the traced test run gave no line data (exit {run.returncode}):\n{tail}")
        data = json.loads(out.read_text(encoding="utf-8"))
    return {rel: set(lines) for rel, lines in data.items() if not rel.startswith("..")}
