"""How many cores this process may use: what sizes the model runtimes' thread pools (torch in the CLI,
onnxruntime in the embedder worker and the CLI)."""

from __future__ import annotations

import math
import os
from pathlib import Path

#: Where cgroup v2 states this process's CPU quota (`max 100000`, or `150000 100000` for 1.5 cores).
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity, and the cgroup's CPU quota when it has one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        quota, period = CPU_MAX.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)
