"""What a server that died mid-run leaves (scratch dirs, pids cgroups) is swept by the next run, never a live one's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.exec.base import OWNER_FILE, fresh_scratch, owner_tag
from sandbox.exec.cgroup import PidsCgroup


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def namespace() -> str:
    return owner_tag().partition(".")[2]


def test_the_scratch_dirs_of_a_dead_server_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    dead, ns = dead_pid(), namespace()
    stale = tmp_path / f"run-{dead}.{ns}-abc"
    live = tmp_path / f"run-{os.getpid()}.{ns}-def"
    other_namespace = tmp_path / f"run-{dead}.1-ghi"
    untagged_recent, untagged_old = tmp_path / "run-recent1", tmp_path / "run-old12345"
    for path in (stale, live, other_namespace, untagged_recent, untagged_old):
        (path / "tmp").mkdir(parents=True)
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(untagged_old, (two_days_ago, two_days_ago))
    with fresh_scratch(tmp_path) as made:
        assert (made / OWNER_FILE).read_text() == owner_tag()
        assert not stale.exists()
        assert not untagged_old.exists()
        assert live.exists()
        assert other_namespace.exists()
        assert untagged_recent.exists()


def test_a_scratch_dir_named_by_its_owner_file_is_swept_only_when_its_server_is_gone(tmp_path: Path) -> None:
    """The short names the tests' paths need (`run-XXXXXXXX`) keep their owner in a file; one the tests replaced by
    a FIFO or garbage neither blocks the sweep nor makes a live run's dir look stale (it goes after a day)."""
    dead, ns = dead_pid(), namespace()
    made: dict[str, Path] = {}
    for name, owner in (("stale", f"{dead}.{ns}"), ("live", owner_tag()), ("garbage", "x"), ("fifo", None)):
        path = made[name] = tmp_path / f"run-{name}"
        (path / "tmp").mkdir(parents=True)
        if owner is None:
            os.mkfifo(path / OWNER_FILE)
        else:
            (path / OWNER_FILE).write_text(owner)
    with fresh_scratch(tmp_path):
        assert {name for name, path in made.items() if path.exists()} == {"live", "garbage", "fifo"}


def test_the_cgroup_of_a_dead_server_is_removed_with_its_processes(tmp_path: Path) -> None:
    probe = PidsCgroup.create(8)
    if probe is None:
        pytest.skip("no writable pids cgroup here")
    parent = probe.path.parent
    probe.remove()
    stale = parent / f"skillbank-{dead_pid()}.{namespace()}-0badc0de"
    live = parent / f"skillbank-{os.getpid()}.{namespace()}-0000cafe"
    stale.mkdir()
    live.mkdir()
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        (stale / "cgroup.procs").write_text(str(orphan.pid))
        group = PidsCgroup.create(8)
        assert group is not None
        group.remove()
        assert orphan.wait(timeout=10) == -9  # a dead server's test, killed
        assert not stale.exists()
        assert live.exists()
    finally:
        orphan.kill()
        orphan.wait()
        for path in (stale, live):
            if path.exists():
                path.rmdir()
