"""The apply_patch-via-MCP report: its ratio, its target line, and the tmpfs comparison it adds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.patch_mcp import TARGET, Case, cpu_lines, render, tmpfs_dir, tmpfs_lines
from bench.proc_cpu import Proc, cpu_by_role, processes


def _case(name: str, git_ms: list[float], ours_ms: list[float], identical: bool = True) -> Case:
    case = Case(name, "1 -> 2", Path("/nowhere"), {}, "diff -ruN a b\n", 1)
    case.times = {"git apply": [t / 1000 for t in git_ms], "skillbank": [t / 1000 for t in ours_ms]}
    case.identical = {"git apply": True, "skillbank": identical}
    return case


def test_the_ratio_is_the_sum_of_medians_and_the_target_line_says_whether_it_holds() -> None:
    cases = [_case("a", [10, 11, 50], [18, 19, 90]), _case("b", [20, 20, 20], [30, 31, 29])]
    report, ratio = render(cases, 3, "0.1, 0.1, 0.1", {}, [])
    assert ratio == pytest.approx((19 + 30) / (11 + 20))
    assert f"Target: <= {TARGET:.0f}x in total: {ratio:.2f}x, pass." in report
    slow = [_case("a", [10, 10, 10], [25, 25, 25])]
    assert "2.50x, FAIL" in render(slow, 3, "0", {}, [])[0]


def test_the_tmpfs_line_gives_both_totals_and_the_cpu_ratio() -> None:
    [line] = tmpfs_lines([_case("a", [5, 6, 7], [12, 13, 14])], "/dev/shm")[1:]
    assert "`git apply` via MCP 6.0 ms, `apply_patch` 13.0 ms: **2.17x**" in line
    assert "trees identical" in line
    assert "trees DIFFER" in tmpfs_lines([_case("a", [5], [6], identical=False)], "/dev/shm")[1]
    assert "skipped" in tmpfs_lines(None, "/dev/shm")[1]
    assert "no tmpfs" in tmpfs_lines(None, None)[1]


def test_tmpfs_is_found_only_where_the_mount_table_lists_dev_shm_as_one(tmp_path: Path) -> None:
    table = tmp_path / "mounts"
    table.write_text("/dev/vda / ext4 rw 0 0\ntmpfs /dev/shm tmpfs rw,nosuid 0 0\n")
    assert tmpfs_dir(table) == "/dev/shm"
    table.write_text("/dev/vda / ext4 rw 0 0\nshm /dev/shm ext4 rw 0 0\n\n")
    assert tmpfs_dir(table) is None
    assert tmpfs_dir(tmp_path / "absent") is None


def _proc_entry(root: Path, pid: int, ppid: int, ticks: tuple[int, int, int, int], cmdline: str, name: str) -> None:
    folder = root / str(pid)
    folder.mkdir()
    utime, stime, cutime, cstime = ticks
    rest = ["S", str(ppid), *["0"] * 9, str(utime), str(stime), str(cutime), str(cstime), "20", "0"]
    (folder / "stat").write_text(f"{pid} ({name}) {' '.join(rest)}\n")
    (folder / "cmdline").write_bytes(cmdline.replace(" ", "\0").encode() + b"\0")


def test_processes_reads_parent_cpu_and_command_line_and_skips_what_it_cannot_read(tmp_path: Path) -> None:
    tick = os.sysconf("SC_CLK_TCK")
    _proc_entry(tmp_path, 10, 1, (tick, tick, 2 * tick, 0), "python -m mcp_server serve", "py (with) spaces")
    (tmp_path / "11").mkdir()  # left before its files were read
    (tmp_path / "self").mkdir()
    table = processes(tmp_path)
    assert list(table) == [10]
    assert table[10] == Proc(10, 1, 4.0, "python -m mcp_server serve")
    assert processes(tmp_path / "absent") == {}


def test_cpu_by_role_counts_the_tree_between_snapshots_by_what_each_process_runs() -> None:
    server, syntax, redact, grandchild = (
        Proc(10, 1, 1.0, "python -m mcp_server serve"),
        Proc(11, 10, 0.5, "python -I -S -c import sandbox.syntax_worker_main as m"),
        Proc(12, 10, 0.2, "python -I -S -c import mcp_server.redact_worker_main as m"),
        Proc(13, 11, 0.1, "git apply"),
    )
    stranger = Proc(20, 1, 9.0, "python -m mcp_server serve")
    before = {p.pid: p for p in (server, syntax, redact, stranger)}
    after = {
        10: Proc(10, 1, 1.5, server.cmdline),
        11: Proc(11, 10, 0.8, syntax.cmdline),
        12: Proc(12, 10, 0.7, "python something else"),  # the pid was reused: counted whole
        13: grandchild,  # started meanwhile: counted whole
        20: Proc(20, 1, 19.0, stranger.cmdline),  # not in the tree
    }
    used = cpu_by_role(before, after, 10)
    assert used == pytest.approx({"server": 0.5, "syntax worker": 0.3, "other": 0.8})
    assert cpu_by_role(before, after, 99) == {}


def test_the_cpu_table_gives_each_process_each_server_and_their_ratio() -> None:
    cpu = {
        "skillbank": {"server": 0.5, "syntax worker": 0.25, "redaction worker": 0.05},
        "git apply": {"server": 0.2},
    }
    text = "\n".join(cpu_lines(cpu, 5))
    assert "| skillbank | syntax worker | 50 |" in text
    assert "| **skillbank, all** | | **160** |" in text
    assert "| **git apply, all** | | **40** |" in text
    assert "use 4.00x the CPU" in text
    assert "not measured" in cpu_lines({"skillbank": {}, "git apply": {"server": 1.0}}, 5)[1]
