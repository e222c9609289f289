"""apply_patch over a real stdio server: its syntax worker and the capture's redaction worker are spawned by the
first patch, reused, and gone with the server, which still leaves at once when its client disconnects."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio


def long_module(name: str, functions: int = 60) -> str:
    body = "".join(f"def {name}_{i}(x):\n    y = x + {i}\n    return y\n\n\n" for i in range(functions))
    return f'"""{name}."""\n\n\n{body}'


def patch_for(names: list[str], broken: bool) -> str:
    """A patch long enough for the worker: one changed line in each of the modules, a syntax error if `broken`."""
    out = []
    for name in names:
        new = "    y = x +\n" if broken else "    y = x + 1000\n"
        out.append(f"--- a/{name}.py\n+++ b/{name}.py\n@@ -5,3 +5,3 @@\n def {name}_0(x):\n-    y = x + 0\n+{new}")
        out.append("     return y\n")
    return "".join(out) + "--- /dev/null\n+++ b/filler.txt\n@@ -0,0 +1 @@\n+" + "x" * 10_000 + "\n"


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def is_worker(pid: int, module: bytes = b"sandbox.syntax_worker") -> bool:
    try:
        return module in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def test_the_workers_serve_every_patch_and_leave_with_the_server(tmp_path: Path) -> None:
    names = [f"mod{i}" for i in range(6)]
    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path / "home"), "SKILLBANK_EMBEDDER": "hash"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_server", "serve", "--workspace", str(tmp_path)], env=env
    )
    client = Client(params)
    await client.__aenter__()
    try:
        server = next(p for p in Path("/proc").iterdir() if p.name.isdigit() and _serves(p, tmp_path))
        pid = int(server.name)
        workers: set[int] = set()
        redactors: set[int] = set()
        for broken in (False, True, False, True):
            for name in names:
                (tmp_path / f"{name}.py").write_text(long_module(name))
            result = await client.call_tool("apply_patch", {"patch": patch_for(names, broken)})
            assert not result.is_error, result.content
            errors = result.structured_content["syntax_errors"]
            assert [(e["path"], e["line"]) for e in errors] == ([(f"{n}.py", 5) for n in names] if broken else [])
            (tmp_path / "filler.txt").unlink()
            workers |= {c for c in children(pid) if is_worker(c)}
            redactors |= {c for c in children(pid) if is_worker(c, b"mcp_server.redact_worker_main")}
        assert len(workers) == 1  # spawned by the first patch, reused by the others
        assert len(redactors) == 1  # the patches hold over 8,000 characters: their windows went to it
        (worker,) = workers
    finally:
        start = time.perf_counter()
        await client.__aexit__(None, None, None)
        left_after = time.perf_counter() - start
    assert not alive(pid)
    assert left_after < 0.3  # the worker is not waited for: it sees its pipes close and leaves by itself
    with anyio.fail_after(5):
        while alive(worker) or any(alive(r) for r in redactors):
            await anyio.sleep(0.005)


def _serves(proc: Path, workspace: Path) -> bool:
    try:
        cmdline = (proc / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"serve" in cmdline and str(workspace).encode() in cmdline and b"mcp_server" in cmdline
