"""The apply_patch-via-MCP report: its ratio, its target line, and the tmpfs comparison it adds."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.patch_mcp import TARGET, Case, render, tmpfs_dir, tmpfs_lines


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
