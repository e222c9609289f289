"""CPU used by a process and its descendants, from Linux's `/proc` (what `bench.patch_mcp` reports per server)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Proc:
    """One process as Linux's `/proc` shows it: its parent, the CPU it used, what it runs."""

    pid: int
    ppid: int
    cpu_s: float
    """User and system time, with that of the children it waited for (`git`, for the baseline's server)."""
    cmdline: str


#: Seconds per clock tick, the unit of a process's CPU times in `/proc`.
TICK_S = 1 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01
#: What a process of skillbank's server is, by what its command line runs.
ROLES: tuple[tuple[str, str], ...] = (
    ("syntax_worker_main", "syntax worker"),
    ("redact_worker_main", "redaction worker"),
)


def processes(proc: Path = Path("/proc")) -> dict[int, Proc]:
    """Every process `proc` lists (empty where there is no `/proc`: not Linux); those that left meanwhile are
    skipped."""
    table: dict[int, Proc] = {}
    try:
        entries = list(proc.iterdir())
    except OSError:
        return table
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            fields = stat[stat.rindex(")") + 2 :].split()  # the name, in parentheses, may hold spaces
            ppid, ticks = int(fields[1]), sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, ValueError, IndexError):
            continue
        table[int(entry.name)] = Proc(int(entry.name), ppid, ticks * TICK_S, cmdline)
    return table


def cpu_by_role(before: dict[int, Proc], after: dict[int, Proc], root: int) -> dict[str, float]:
    """CPU seconds that `root` and its descendants used between the two snapshots, by role: `server` for `root`,
    a worker by its `ROLES` name, `other` for anything else (a process that started meanwhile counts whole)."""
    tree, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        if pid in after:
            tree.append(after[pid])
            frontier += [p.pid for p in after.values() if p.ppid == pid]
    used: dict[str, float] = {}
    for p in tree:
        role = "server" if p.pid == root else next((name for key, name in ROLES if key in p.cmdline), "other")
        start = before[p.pid].cpu_s if p.pid in before and before[p.pid].cmdline == p.cmdline else 0.0
        used[role] = used.get(role, 0.0) + max(p.cpu_s - start, 0.0)
    return used
