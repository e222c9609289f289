"""Hostile suites, on every backend: each fault is contained, and the next run in the same workspace still works.

The 10 GB allocation never reaches the host: the address-space rlimit (local) or the memory limit (docker) stops
it. The fork bomb is bounded by the pids cgroup (local) or the container's pids limit (docker).
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.exec.cgroup import PidsCgroup
from sandbox.testing.config import RunnerConfig
from sandbox.testing.models import TestRunResult
from sandbox.testing.runner import run_tests

HEALTHY = {"tests/test_healthy.py": "def test_still_fine():\n    assert 1 + 1 == 2\n"}
Setup = tuple[str, RunnerConfig, list[Path]]

BACKENDS = [
    pytest.param("local+bwrap", id="local-bwrap"),
    pytest.param("local", id="local-plain"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]
pytestmark = pytest.mark.parametrize("backend_setup", BACKENDS, indirect=True)


def pids_cgroup_available() -> bool:
    group = PidsCgroup.create(8)
    if group is not None:
        group.remove()
    return group is not None


def skip_unfenced(setup: Setup, what: str) -> None:
    backend, config, _ = setup
    if backend == "local" and not config.local.use_bwrap:
        pytest.skip(f"plain local cannot {what} (its results warn about it: see test_local_sandbox)")


def fault_run(make_workspace, setup: Setup, fault: str, *, timeout_s: int = 60) -> tuple[Path, TestRunResult]:
    backend, config, containers = setup
    ws = make_workspace({**HEALTHY, "tests/test_fault.py": fault})
    containers.append(ws)
    return ws, run_tests(ws, tests=["tests/test_fault.py"], backend=backend, timeout_s=timeout_s, config=config)


def assert_next_run_works(ws: Path, setup: Setup) -> None:
    backend, config, _ = setup
    result = run_tests(ws, tests=["tests/test_healthy.py"], backend=backend, timeout_s=60, config=config)
    assert result.status == "passed", result.output_tail
    assert result.passed == 1


def test_infinite_loop_times_out_and_leaves_no_process(
    make_workspace, backend_setup: Setup, live_processes: Callable[[str], list[str]]
) -> None:
    ws, result = fault_run(
        make_workspace, backend_setup, "def test_spin():\n    while True:\n        pass\n", timeout_s=2
    )
    assert result.status == "timeout"
    assert result.exit_code is None
    assert result.reward.value == 0.0
    assert live_processes(str(ws)) == []
    assert_next_run_works(ws, backend_setup)


def test_a_timed_out_run_lists_the_tests_that_finished_and_names_where_it_hung(
    make_workspace, backend_setup: Setup, live_processes: Callable[[str], list[str]]
) -> None:
    fault = (
        "import time\n\ndef test_a():\n    pass\n\ndef test_b():\n    assert 1 == 2\n\n"
        "def test_hang():\n    time.sleep(120)\n\ndef test_after():\n    pass\n"
    )
    ws, result = fault_run(make_workspace, backend_setup, fault, timeout_s=4)
    assert result.status == "timeout"
    assert result.exit_code is None
    assert {(t.id, t.outcome) for t in result.tests} == {
        ("tests/test_fault.py::test_a", "passed"),
        ("tests/test_fault.py::test_b", "failed"),
    }, (result.warnings, result.output_tail)
    assert "assert 1 == 2" in (result.tests[0].message or "")
    [note] = [w for w in result.warnings if w.startswith("the run timed out")]
    assert "stopped at tests/test_fault.py:10 (a test there hangs" in note
    assert "the 2 test(s) that finished are listed" in note
    assert result.reward.value == 0.0
    assert live_processes(str(ws)) == []
    assert_next_run_works(ws, backend_setup)


def test_a_server_started_with_ctrl_c_ignored_still_gets_the_finished_tests_of_a_timed_out_run(
    make_workspace, backend_setup: Setup
) -> None:
    """`skillbank serve &` from a script (or nohup) inherits SIGINT ignored; the tests must not inherit it."""
    fault = "import time\n\ndef test_a():\n    pass\n\ndef test_hang():\n    time.sleep(120)\n"
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _, result = fault_run(make_workspace, backend_setup, fault, timeout_s=8)
    finally:
        signal.signal(signal.SIGINT, before)
    assert result.status == "timeout"
    assert [(t.id, t.outcome) for t in result.tests] == [("tests/test_fault.py::test_a", "passed")], result.warnings


def test_a_test_that_ignores_the_interrupt_is_killed_after_the_grace(
    make_workspace, backend_setup: Setup, live_processes: Callable[[str], list[str]]
) -> None:
    fault = (
        "import signal, time\n\ndef test_stubborn():\n    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "    while True:\n        time.sleep(0.01)\n"
    )
    ws, result = fault_run(make_workspace, backend_setup, fault, timeout_s=2)
    assert result.status == "timeout"
    assert result.tests == []
    assert 2 <= result.duration_s < 15
    assert any("no test had finished" in w for w in result.warnings)
    assert live_processes(str(ws)) == []
    assert_next_run_works(ws, backend_setup)


def test_ten_gigabyte_allocation_is_stopped_inside_the_sandbox(make_workspace, backend_setup: Setup) -> None:
    backend, config, containers = backend_setup
    config = config.model_copy(update={"docker": config.docker.model_copy(update={"memory_mb": 256})})
    setup = (backend, config, containers)
    fault = "def test_hog():\n    hog = b'x' * (10 * 1024**3)\n    assert len(hog)\n"
    ws, result = fault_run(make_workspace, setup, fault)
    if result.backend == "docker":
        assert result.status == "error"  # the engine's OOM killer takes pytest down with it
        assert result.exit_code == 137
        assert any("SIGKILL" in w for w in result.warnings)
    else:
        assert result.status == "failed"
        assert result.tests[0].message is not None
        assert "MemoryError" in result.tests[0].message
    assert_next_run_works(ws, setup)


@pytest.mark.slow
def test_fork_bomb_is_bounded_and_cleaned_up(
    make_workspace, backend_setup: Setup, live_processes: Callable[[str], list[str]]
) -> None:
    if backend_setup[0] == "local" and not pids_cgroup_available():
        pytest.skip("no pids cgroup here: a local fork bomb would only be stopped by the timeout")
    fault = "import os\n\ndef test_bomb():\n    while True:\n        try:\n            os.fork()\n"
    fault += "        except OSError:\n            pass\n"
    ws, result = fault_run(make_workspace, backend_setup, fault, timeout_s=3)
    assert result.status == "timeout"
    assert live_processes(str(ws)) == []
    assert_next_run_works(ws, backend_setup)


def test_network_connection_fails_under_isolation(make_workspace, backend_setup: Setup) -> None:
    skip_unfenced(backend_setup, "cut the network")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        fault = (
            "import socket, pytest\n\ndef test_phone_home():\n    with pytest.raises(OSError):\n"
            f"        socket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
        )
        ws, result = fault_run(make_workspace, backend_setup, fault)
        assert result.status == "passed", result.output_tail
        with pytest.raises(BlockingIOError):
            server.accept()
    assert_next_run_works(ws, backend_setup)


@pytest.mark.slow
def test_gigabyte_of_output_is_capped(make_workspace, backend_setup: Setup) -> None:
    fault = (
        "import sys\n\ndef test_flood(capsys):\n    chunk = 'y' * (1 << 20)\n    with capsys.disabled():\n"
        "        for _ in range(1024):\n            sys.stdout.write(chunk)\n        sys.stdout.flush()\n"
    )
    ws, result = fault_run(make_workspace, backend_setup, fault, timeout_s=120)
    assert result.status == "passed"
    assert len(result.output_tail) <= 8000
    assert result.output_truncated
    assert any("output truncated" in w and "1073" in w for w in result.warnings)
    assert_next_run_works(ws, backend_setup)


def test_deleting_files_outside_the_workspace_is_impossible(make_workspace, backend_setup: Setup, tmp_path) -> None:
    skip_unfenced(backend_setup, "protect files outside the workspace")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep")
    fault = f"import shutil\n\ndef test_vandal():\n    shutil.rmtree({str(victim)!r}, ignore_errors=True)\n"
    ws, result = fault_run(make_workspace, backend_setup, fault)
    assert result.status == "passed"
    assert (victim / "precious.txt").read_text() == "keep"
    assert_next_run_works(ws, backend_setup)


def test_the_repository_metadata_is_read_only_so_no_host_git_filter_can_be_planted(
    make_workspace, backend_setup: Setup
) -> None:
    """Host git runs on the workspace after each run (the syntax reward); `.git/` must not be writable inside."""
    skip_unfenced(backend_setup, "protect the workspace's .git")
    fault = (
        "from pathlib import Path\n\ndef test_plant():\n"
        "    cfg = Path('.git/config')\n"
        "    try:\n"
        "        cfg.write_text(cfg.read_text() + '[filter \"pwn\"]\\n\\tclean = touch PWNED\\n')\n"
        "    except OSError:\n"
        "        return\n"
        "    raise AssertionError('.git/config was writable')\n"
    )
    ws, result = fault_run(make_workspace, backend_setup, fault)
    assert result.status == "passed", result.output_tail
    assert "pwn" not in (ws / ".git" / "config").read_text()
    assert_next_run_works(ws, backend_setup)
