"""The plain local backend's watcher (the shim): daemons die with the run, the server's secrets and wire stay out
of the tests' reach, and a server that dies takes its tests with it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.exec import local
from sandbox.exec.base import Cancel
from sandbox.exec.cgroup import CGROUP_ROOT
from sandbox.exec.local import ESCAPE_WARNING, LocalConfig, LocalSandbox, probe_bwrap

BWRAP = shutil.which("bwrap")
BWRAP_OK = BWRAP is not None and probe_bwrap(BWRAP) is None

ROOT = Path(__file__).resolve().parents[3]

#: Double fork + setsid: a daemon that leaves the process group and the session, then sleeps with `marker`.
DAEMON = """
import os, subprocess, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", sys.argv[1] + "-sleeper"])
        time.sleep(300)
    os._exit(0)
time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def no_cgroup(monkeypatch: pytest.MonkeyPatch) -> None:
    """The usual non-root host: no pids cgroup can be made."""
    monkeypatch.setattr(local.PidsCgroup, "create", classmethod(lambda cls, *a, **k: None))


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    done = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if condition():
            return True
        done.wait(0.05)
    return condition()


@pytest.mark.parametrize("with_cgroup", [False, True], ids=["no-cgroup", "cgroup-if-any"])
def test_a_setsid_daemon_is_killed_when_the_command_ends(
    ws: Path, live_processes, monkeypatch: pytest.MonkeyPatch, with_cgroup: bool
) -> None:
    if not with_cgroup:
        monkeypatch.setattr(local.PidsCgroup, "create", classmethod(lambda cls, *a, **k: None))
    marker = f"marker-{uuid.uuid4().hex}"
    box = LocalSandbox(ws, LocalConfig(use_bwrap=False))
    result = box.run([sys.executable, "-c", DAEMON, marker, "0.5"], cwd=ws, timeout=60)
    assert result.exit_code == 0, result.stderr
    assert result.killed_leftovers
    assert live_processes(marker) == []
    assert ESCAPE_WARNING not in box.warnings


def test_a_daemon_that_moves_itself_out_of_the_pids_cgroup_is_killed_too(ws: Path, live_processes) -> None:
    """As root a test can leave the cgroup; it cannot leave the watcher's subtree."""
    probe = local.PidsCgroup.create(8)
    if probe is None or os.geteuid() != 0:
        pytest.skip("needs a pids cgroup and root (only root can leave it)")
    probe.remove()
    marker = f"marker-{uuid.uuid4().hex}"
    leave = f"open({str(CGROUP_ROOT / 'pids' / 'cgroup.procs')!r}, 'w').write(str(os.getpid()))\n"
    daemon = DAEMON.replace("    os.setsid()\n", "    os.setsid()\n    " + leave)
    result = LocalSandbox(ws, LocalConfig(use_bwrap=False)).run(
        [sys.executable, "-c", daemon, marker, "0.5"], cwd=ws, timeout=60
    )
    assert result.exit_code == 0, result.stderr
    assert result.killed_leftovers
    assert live_processes(marker) == []


@pytest.mark.parametrize("use_bwrap", [True, False], ids=["bwrap", "plain"])
def test_a_command_that_leaves_nothing_running_is_never_reported_as_leaving_something(
    ws: Path, use_bwrap: bool
) -> None:
    """Under bubblewrap its pid-namespace init is often reparented to the watcher while it exits: not a leftover."""
    if use_bwrap and not BWRAP_OK:
        pytest.skip("bubblewrap is not installed or cannot make namespaces")
    box = LocalSandbox(ws, LocalConfig(use_bwrap=use_bwrap))
    assert [box.run(["true"], cwd=ws, timeout=30).killed_leftovers for _ in range(20)] == [False] * 20


def test_a_forkserver_that_exits_by_itself_when_the_tests_end_is_not_reported(ws: Path) -> None:
    code = "import multiprocessing as mp\nwith mp.get_context('forkserver').Pool(1) as pool:\n    pool.map(abs, [1])\n"
    box = LocalSandbox(ws, LocalConfig(use_bwrap=False))
    results = [box.run([sys.executable, "-c", code], cwd=ws, timeout=60) for _ in range(3)]
    assert [(r.exit_code, r.killed_leftovers) for r in results] == [(0, False)] * 3, results[0].stderr


#: Pools whose helpers (a forkserver, the resource tracker) exit by themselves a few ms after the command.
POOLS = {
    "forkserver-executor": "import concurrent.futures as cf, multiprocessing as mp\n"
    "with cf.ProcessPoolExecutor(2, mp_context=mp.get_context('forkserver')) as ex:\n    list(ex.map(abs, [1]))\n",
    "spawn-pool": "import multiprocessing as mp\n"
    "with mp.get_context('spawn').Pool(1) as pool:\n    pool.map(abs, [1])\n",
}


@pytest.mark.skipif(not BWRAP_OK, reason="bubblewrap is not installed or cannot make namespaces")
@pytest.mark.parametrize("pool", sorted(POOLS))
def test_pool_helpers_that_exit_by_themselves_inside_bubblewrap_are_not_reported(ws: Path, pool: str) -> None:
    box = LocalSandbox(ws, LocalConfig(), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])
    results = [box.run([sys.executable, "-c", POOLS[pool]], cwd=ws, timeout=60) for _ in range(3)]
    assert [(r.exit_code, r.killed_leftovers) for r in results] == [(0, False)] * 3, results[0].stderr


@pytest.mark.skipif(not BWRAP_OK, reason="bubblewrap is not installed or cannot make namespaces")
def test_a_daemon_left_inside_bubblewrap_is_still_reported_and_killed(ws: Path, live_processes) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    box = LocalSandbox(ws, LocalConfig(), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])
    result = box.run([sys.executable, "-c", DAEMON, marker, "0.5"], cwd=ws, timeout=60)
    assert result.exit_code == 0, result.stderr
    assert result.killed_leftovers
    assert live_processes(marker) == []


def test_the_command_inherits_no_descriptor_but_its_standard_streams(ws: Path) -> None:
    code = "import os; print(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))"
    with Cancel() as cancel:
        result = LocalSandbox(ws, LocalConfig(use_bwrap=False)).run(
            [sys.executable, "-c", code], cwd=ws, timeout=30, cancel=cancel
        )
    assert result.stdout.strip() == "[0, 1, 2, 3]"  # 3: the listing itself


def test_a_timeout_kills_a_setsid_daemon_without_a_cgroup(ws: Path, live_processes, no_cgroup: None) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    result = LocalSandbox(ws, LocalConfig(use_bwrap=False)).run(
        [sys.executable, "-c", DAEMON, marker, "300"], cwd=ws, timeout=2
    )
    assert result.timed_out
    assert live_processes(marker) == []


def test_a_test_that_kills_the_watcher_gets_a_warning_that_processes_may_have_escaped(
    ws: Path, no_cgroup: None
) -> None:
    box = LocalSandbox(ws, LocalConfig(use_bwrap=False))
    result = box.run([sys.executable, "-c", "import os; os.kill(os.getppid(), 9)"], cwd=ws, timeout=30)
    assert result.exit_code == 128 + 9
    assert ESCAPE_WARNING in box.warnings


def test_an_ordinary_command_reports_its_exit_and_signal_as_before(ws: Path) -> None:
    box = LocalSandbox(ws, LocalConfig(use_bwrap=False))
    assert box.run([sys.executable, "-c", "import sys; sys.exit(3)"], cwd=ws, timeout=30).exit_code == 3
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    assert box.run([sys.executable, "-c", code], cwd=ws, timeout=30).exit_code == 128 + 15
    assert box.warnings.count(ESCAPE_WARNING) == 0


#: Walks up from the command's parent, trying each ancestor's environ and fds (the MCP wire, the Cancel pipe).
ATTACK = """
import os
found, pid = [], os.getppid()
while pid > 1:
    try:
        if b"SB_SERVER_ONLY=" in open(f"/proc/{pid}/environ", "rb").read():
            found.append("environ")
    except OSError:
        pass
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            os.readlink(f"/proc/{pid}/fd/{fd}")
            found.append("fd")
            break
    except OSError:
        pass
    status = open(f"/proc/{pid}/status").read()
    pid = int(status.split("PPid:")[1].split()[0])
print("FOUND", sorted(set(found)), "OWN", b"PATH=" in open("/proc/self/environ", "rb").read())
"""

SERVER = """
import json, sys
from pathlib import Path
from sandbox.exec.local import LocalConfig, LocalSandbox
ws, scratch, argv, timeout = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3]), float(sys.argv[4])
result = LocalSandbox(ws, LocalConfig(use_bwrap=False, scratch_dir=scratch)).run(argv, cwd=ws, timeout=timeout)
print(result.stdout, result.stderr)
"""


def unprivileged(argv: list[str]) -> list[str]:
    """`argv` without capabilities, as a server run by a user is: as root, CAP_SYS_PTRACE reads any process (and
    a process without it may not read one that has more capabilities), so root is no test of this."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and no setpriv to drop capabilities")
    return [setpriv, "--inh-caps=-all", "--bounding-set=-all", "--", *argv]


def server(ws: Path, tmp_path: Path, argv: list[str], timeout: float) -> subprocess.Popen[str]:
    """A process holding a secret in its environment that runs `argv` in a plain LocalSandbox, as the server does."""
    env = {**os.environ, "SB_SERVER_ONLY": "sk-server-secret", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", SERVER, str(ws), str(tmp_path / "scratch"), json.dumps(argv), str(timeout)]
    return subprocess.Popen(
        unprivileged(cmd), env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def test_a_plain_local_test_cannot_read_the_servers_environment_or_open_its_fds(ws: Path, tmp_path: Path) -> None:
    proc = server(ws, tmp_path, [sys.executable, "-c", ATTACK], 60)
    out, _ = proc.communicate(timeout=120)
    assert "FOUND [] OWN True" in out, out


def test_the_tests_and_their_daemons_die_when_the_server_is_killed(ws: Path, tmp_path: Path, live_processes) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    proc = server(ws, tmp_path, [sys.executable, "-c", DAEMON, marker, "300"], 600)
    try:
        assert wait_until(lambda: live_processes(f"{marker}-sleeper") != []), "the run did not start"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    assert wait_until(lambda: live_processes(marker) == []), live_processes(marker)
