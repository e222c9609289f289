"""Cold start and memory of `skillbank serve` over stdio.

Cold start: spawn the process -> `initialize` -> `tools/list` answered, against a bare hello-world MCPServer
with one tool spawned the same way (same interpreter, same client) in the same run. Target: <= 2x.

Memory: the server's RSS (from /proc) once the embedding model is loaded and a search has run, on a store holding
the starter pack. Target: <= 600 MB.
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


async def loaded_rss(home: Path) -> float:
    async with Client(_params(["-m", "mcp_server", "serve"], home)) as client:
        await client.list_tools()
        result = await client.call_tool("search_skills", {"query": "ModuleNotFoundError: No module named 'yaml'"})
        if result.is_error or not result.structured_content["skills"]:
            raise RuntimeError(f"search failed: {result.content}")
        (pid,) = server_pids(home)
        return rss_mb(pid)


def main(rounds: int = 7) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        hello = home / "hello_server.py"
        hello.write_text(HELLO)
        ours, bare = [], []
        anyio.run(time_to_tools, ["-m", "mcp_server", "serve"], home)  # first run creates the data dir
        for _ in range(rounds):
            bare.append(anyio.run(time_to_tools, [str(hello)], home))
            ours.append(anyio.run(time_to_tools, ["-m", "mcp_server", "serve"], home))
        fresh = home / "fresh"
        fresh.mkdir()
        rss = anyio.run(loaded_rss, fresh)  # worst case: this process also embeds and stores the starter pack
    ratio = statistics.median(ours) / statistics.median(bare)
    report = "\n".join(
        [
            "# Cold start and memory",
            "",
            machine(),
            f"Spawn -> initialize -> tools/list, median of {rounds} alternating runs, same client and interpreter.",
            "",
            "| case | median ms | min ms | max ms | target | result |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| bare hello-world MCPServer (baseline) | {statistics.median(bare):.0f} | {min(bare):.0f} | "
            f"{max(bare):.0f} | - | - |",
            f"| `skillbank serve` | {statistics.median(ours):.0f} | {min(ours):.0f} | {max(ours):.0f} | "
            f"<= 2x baseline | {ratio:.2f}x {'pass' if ratio <= 2 else 'FAIL'} |",
            f"| server RSS: model loaded, starter pack seeded, one search | {rss:.0f} MB | | | <= 600 MB | "
            f"{'pass' if rss <= 600 else 'FAIL'} |",
            "",
        ]
    )
    print(report)
    write_report(report, "startup")


if __name__ == "__main__":
    main()
