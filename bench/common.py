"""Helpers shared by the benchmarks: where the repo is, what machine ran them, and writing the report."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def machine_line() -> str:
    """`Linux x86_64, <cpu model>, N CPUs, Python 3.x.y`."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def machine() -> str:
    """The line a report starts with: when and where it ran."""
    return f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine_line()}.\n"


def write_report(markdown: str, name: str) -> Path:
    out = ROOT / "docs" / "benchmarks" / f"{name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(markdown, encoding="utf-8")
    print(f"wrote {out}")
    return out
