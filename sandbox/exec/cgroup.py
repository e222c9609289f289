"""A throw-away pids cgroup: bounds how many processes a command may start, and finds every one of them to kill.

RLIMIT_NPROC is per user and not enforced for root, so the local sandbox bounds a fork bomb with the pids
controller instead, when the host lets this process create a cgroup (cgroup v1 `pids` hierarchy, or a v2 cgroup
whose parent delegates `pids`). Processes that leave their process group or session are still in the cgroup, so
`kill_all` reaches them too. When no cgroup can be made, `create` returns None and the caller says so.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
import uuid
from pathlib import Path

from sandbox.exec.base import owner_gone, owner_tag

CGROUP_ROOT = Path("/sys/fs/cgroup")


class PidsCgroup:
    """One cgroup with a `pids.max`; the command joins it by writing its pid to `procs_file`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, max_pids: int, root: Path = CGROUP_ROOT) -> PidsCgroup | None:
        """A fresh cgroup below this process's own, limited to `max_pids` processes; None when not permitted."""
        parent = _parent_dir(root)
        if parent is None:
            return None
        sweep(parent)
        path = parent / f"skillbank-{owner_tag()}-{uuid.uuid4().hex[:8]}"
        try:
            path.mkdir()
        except OSError:
            return None
        group = cls(path)
        try:
            (path / "pids.max").write_text(str(max_pids))
        except OSError:
            group.remove()
            return None
        return group

    @property
    def procs_file(self) -> Path:
        return self.path / "cgroup.procs"

    def pids(self) -> list[int]:
        try:
            text = self.procs_file.read_text()
        except OSError:
            return []
        return [int(line) for line in text.split() if line.strip()]

    def kill_all(self, timeout: float = 5.0) -> int:
        """SIGKILL every process in the cgroup until it is empty (or `timeout` passes); returns how many."""
        killed: set[int] = set()
        deadline = time.monotonic() + timeout
        pause = threading.Event()
        while True:
            pids = self.pids()
            if not pids or time.monotonic() > deadline:
                return len(killed)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            pause.wait(0.005)

    def remove(self, timeout: float = 5.0) -> None:
        """Remove the (emptied) cgroup; a cgroup that stays busy past `timeout` is left to the kernel's owner."""
        deadline = time.monotonic() + timeout
        pause = threading.Event()
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                self.kill_all(timeout=0.5)
                pause.wait(0.01)


#: `skillbank-<pid>.<pid namespace>-<hex>`; before the tag it was `skillbank-<pid>-<hex>`.
_TAGGED = re.compile(r"skillbank-(\d+\.\d+)-[0-9a-f]{8}")
_UNTAGGED = re.compile(r"skillbank-(\d+)-[0-9a-f]{8}")


def sweep(parent: Path) -> int:
    """Remove the cgroups under `parent` left by servers that died mid-run; returns how many.

    One whose owner surely exited (`owner_gone`) has its processes killed first (a dead server's tests); an
    untagged one, from before the tag, is removed only when it is empty and its pid is gone.
    """
    removed = 0
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            tagged, untagged = _TAGGED.fullmatch(entry.name), _UNTAGGED.fullmatch(entry.name)
            if tagged and owner_gone(tagged.group(1)):
                PidsCgroup(entry).kill_all(timeout=1.0)
            elif not (untagged and owner_gone(f"{untagged.group(1)}.{owner_tag().partition('.')[2]}")):
                continue
            with contextlib.suppress(OSError):
                entry.rmdir()
                removed += 1
    return removed


def _own_cgroup(controller: str | None) -> str | None:
    """This process's cgroup path in the hierarchy of `controller` (None: the v2 unified hierarchy)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, rel = line.split(":", 2)
        if controller is None and controllers == "":
            return rel
        if controller is not None and controller in controllers.split(","):
            return rel
    return None


def _parent_dir(root: Path) -> Path | None:
    v1 = root / "pids"
    if (v1 / "cgroup.procs").exists():
        rel = _own_cgroup("pids")
        if rel is None:
            return None
        parent = v1 / rel.lstrip("/")
        return parent if os.access(parent, os.W_OK) else None
    if (root / "cgroup.controllers").exists():
        rel = _own_cgroup(None)
        if rel is None:
            return None
        parent = root / rel.lstrip("/")
        try:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if "pids" not in enabled:
            try:
                (parent / "cgroup.subtree_control").write_text("+pids")
            except OSError:
                return None
        return parent if os.access(parent, os.W_OK) else None
    return None
