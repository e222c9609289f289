"""A `Cancel` set from another thread stops a command at once, with everything it started, in every local mode;
the runner then raises `RunCancelled` instead of reporting a run nobody wants."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from sandbox.errors import RunCancelled
from sandbox.exec.base import Cancel
from sandbox.exec.local import LocalConfig, LocalSandbox
from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_tests

from .test_local_sandbox import BWRAP_OK


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _later(seconds: float, cancel: Cancel) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(seconds), cancel.set()), daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("bwrap", [True, False], ids=["bwrap", "plain"])
def test_a_cancel_kills_the_command_and_what_it_started_and_returns_at_once(tmp_path: Path, bwrap: bool) -> None:
    if bwrap and not BWRAP_OK:
        pytest.skip("bubblewrap is not installed or cannot make namespaces")
    ws = tmp_path / "ws"
    ws.mkdir()
    pids = ws  # writable under bubblewrap too
    code = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pids / 'pid')!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(60)\n"
    )
    box = LocalSandbox(ws, LocalConfig(use_bwrap=bwrap), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])
    with Cancel() as cancel:
        _later(1.0, cancel)
        start = time.monotonic()
        result = box.run([sys.executable, "-c", code], cwd=ws, timeout=60, scratch=None, cancel=cancel)
        took = time.monotonic() - start
    assert result.cancelled, result
    assert not result.timed_out
    assert result.exit_code is None
    assert took < 10  # not the 60 s of the command
    if not bwrap:  # under bwrap the pids are the namespace's own
        for pid in map(int, (pids / "pid").read_text().split()):
            deadline = time.monotonic() + 5
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not _alive(pid)


def test_a_cancel_set_before_the_run_starts_stops_it_before_it_runs_long(tmp_path: Path) -> None:
    box = LocalSandbox(tmp_path, LocalConfig(use_bwrap=False))
    with Cancel() as cancel:
        cancel.set()
        start = time.monotonic()
        result = box.run([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path, timeout=60, cancel=cancel)
    assert result.cancelled
    assert time.monotonic() - start < 10


def test_a_command_that_ends_before_any_cancel_is_reported_as_usual(tmp_path: Path) -> None:
    box = LocalSandbox(tmp_path, LocalConfig(use_bwrap=False))
    with Cancel() as cancel:
        result = box.run([sys.executable, "-c", "print('hi')"], cwd=tmp_path, timeout=60, cancel=cancel)
        cancel.set()  # too late to matter
    assert (result.exit_code, result.cancelled, result.stdout.strip()) == (0, False, "hi")


def test_a_cancelled_test_run_raises_run_cancelled_instead_of_reporting(tmp_path: Path) -> None:
    (tmp_path / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(60)\n")
    config = RunnerConfig(test_python=sys.executable)
    with Cancel() as cancel:
        _later(1.5, cancel)
        start = time.monotonic()
        with pytest.raises(RunCancelled):
            run_tests(tmp_path, backend="local", timeout_s=60, config=config, cancel=cancel)
    assert time.monotonic() - start < 15
