"""Cold start and memory of `skillbank serve` over stdio.

Cold start: spawn the process -> `initialize` -> `tools/list` answered, against a bare hello-world MCPServer
with one tool spawned the same way (same interpreter, same client) in the same run. Target: <= 2x.

Exit: from the client closing the server's stdin to the server process being gone, after `tools/list` (against
the same bare server) and with a search in flight while the embedder worker is loading the model (torch's library
mapped in the worker). Target: <= 0.3 s. The worker must be gone too (killed with the server).

Memory: the server's RSS (from /proc) once the embedding model is loaded and a search has run, on a store holding
the starter pack, and the embedder worker's beside it. Target: <= 600 MB for the two together.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from bench.common import machine, write_report

HELLO = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("hello")

@server.tool()
def hello(name: str) -> str:
    return f"hello {name}"

server.run()
"""


def _params(args: list[str], home: Path) -> StdioServerParameters:
    env = {**os.environ, "SKILLBANK_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(home))


async def time_to_tools(args: list[str], home: Path) -> float:
    start = time.perf_counter()
    async with Client(_params(args, home)) as client:
        tools = await client.list_tools()
        elapsed = time.perf_counter() - start
    assert tools.tools
    return elapsed * 1000


async def time_to_exit(args: list[str], home: Path, *, during_load: bool = False) -> float:
    """Seconds from closing the server's stdin to its exit (the SDK client waits for the process, up to 2 s)."""
    client = Client(_params(args, home))
    await client.__aenter__()
    try:
        await client.list_tools()
        if during_load:
            (pid,) = server_pids(home)
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "search_skills", {"query": "KeyError: 'x'"})
                with anyio.fail_after(60):
                    while not (workers := worker_pids(pid, (b"onnxruntime", b"libtorch"))):
                        await anyio.sleep(0.01)
                tg.cancel_scope.cancel()
    finally:
        start = time.perf_counter()
        await client.__aexit__(None, None, None)
    elapsed = time.perf_counter() - start
    if during_load:
        with anyio.fail_after(5):
            while any(Path(f"/proc/{w}/cmdline").exists() and _state(w) != "Z" for w in workers):
                await anyio.sleep(0.01)
    return elapsed


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def worker_pids(server: int, mapped: tuple[bytes, ...] = (b"",)) -> list[int]:
    """The server's embedder worker processes (those with one of `mapped` in their memory map: a model runtime's
    library once its load is under way)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != server:
                continue
            if b"worker_main" in (entry / "cmdline").read_bytes():
                maps = (entry / "maps").read_bytes()
                if any(name in maps for name in mapped):
                    found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def server_pids(home: Path) -> list[int]:
    """Processes whose command line runs `mcp_server serve` with this home as cwd."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"mcp_server" in cmd and b"serve" in cmd and cwd == str(home):
            pids.append(int(entry.name))
    return pids


async def loaded_rss(home: Path) -> tuple[float, float]:
    async with Client(_params(["-m", "mcp_server", "serve"], home)) as client:
        await client.list_tools()
        result = await client.call_tool("search_skills", {"query": "ModuleNotFoundError: No module named 'yaml'"})
        if result.is_error or not result.structured_content["skills"]:
            raise RuntimeError(f"search failed: {result.content}")
        (pid,) = server_pids(home)
        return rss_mb(pid), sum(rss_mb(w) for w in worker_pids(pid))


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main(rounds: int = 7) -> None:
    load_before = load()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        hello = home / "hello_server.py"
        hello.write_text(HELLO)
        ours, bare = [], []
        anyio.run(time_to_tools, ["-m", "mcp_server", "serve"], home)  # first run creates the data dir
        for _ in range(rounds):
            bare.append(anyio.run(time_to_tools, [str(hello)], home))
            ours.append(anyio.run(time_to_tools, ["-m", "mcp_server", "serve"], home))
        exit_bare = [anyio.run(time_to_exit, [str(hello)], home) for _ in range(3)]
        exit_ours = [anyio.run(time_to_exit, ["-m", "mcp_server", "serve"], home) for _ in range(3)]
        exit_loading = [
            anyio.run(lambda: time_to_exit(["-m", "mcp_server", "serve"], home, during_load=True)) for _ in range(3)
        ]
        fresh = home / "fresh"
        fresh.mkdir()
        # worst case: this process also embeds and stores the starter pack
        rss, worker_rss = anyio.run(loaded_rss, fresh)
    ratio = statistics.median(ours) / statistics.median(bare)
    report = "\n".join(
        [
            "# Cold start and memory",
            "",
            machine(),
            f"Load average (1, 5, 15 min) at the start: {load_before}; at the end: {load()} (2 cores, shared).",
            "",
            f"Spawn -> initialize -> tools/list, median of {rounds} alternating runs, same client and interpreter.",
            "",
            "| case | median ms | min ms | max ms | target | result |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| bare hello-world MCPServer (baseline) | {statistics.median(bare):.0f} | {min(bare):.0f} | "
            f"{max(bare):.0f} | - | - |",
            f"| `skillbank serve` | {statistics.median(ours):.0f} | {min(ours):.0f} | {max(ours):.0f} | "
            f"<= 2x baseline | {ratio:.2f}x {'pass' if ratio <= 2 else 'FAIL'} |",
            f"| exit after disconnect: bare server (baseline) | {statistics.median(exit_bare) * 1000:.0f} | "
            f"{min(exit_bare) * 1000:.0f} | {max(exit_bare) * 1000:.0f} | - | - |",
            _exit_row("exit after disconnect: `skillbank serve`, after tools/list", exit_ours),
            _exit_row("exit after disconnect: `skillbank serve`, during the model load", exit_loading),
            f"| RSS: model loaded, starter pack seeded, one search: server {rss:.0f} MB + embedder worker "
            f"{worker_rss:.0f} MB | {rss + worker_rss:.0f} MB | | | <= 600 MB | "
            f"{'pass' if rss + worker_rss <= 600 else 'FAIL'} |",
            "",
        ]
    )
    print(report)
    write_report(report, "startup")


def _exit_row(label: str, times: list[float]) -> str:
    worst = max(times)
    return (
        f"| {label} | {statistics.median(times) * 1000:.0f} | {min(times) * 1000:.0f} | {worst * 1000:.0f} | "
        f"<= 300 ms | {'pass' if worst <= 0.3 else 'FAIL'} |"
    )


if __name__ == "__main__":
    main()
