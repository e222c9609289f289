"""`LocalSandbox` on its own: environment, limits, output cap, timeouts, and what bubblewrap fences off."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from sandbox.errors import SandboxConfigError
from sandbox.exec.base import Sandbox
from sandbox.exec.cgroup import PidsCgroup
from sandbox.exec.interpreter import find_interpreter
from sandbox.exec.local import LocalConfig, LocalSandbox, probe_bwrap

BWRAP = shutil.which("bwrap")
BWRAP_OK = BWRAP is not None and probe_bwrap(BWRAP) is None
needs_bwrap = pytest.mark.skipif(not BWRAP_OK, reason="bubblewrap is not installed or cannot make namespaces")


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.fixture(params=[True, False], ids=["bwrap", "plain"])
def sandbox(request: pytest.FixtureRequest, ws: Path) -> LocalSandbox:
    if request.param and not BWRAP_OK:
        pytest.skip("bubblewrap is not installed or cannot make namespaces")
    return LocalSandbox(ws, LocalConfig(use_bwrap=request.param), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])


def _write_a_report(box: Sandbox, ws: Path) -> tuple[Path, str, str]:
    """What the runner relies on, through the protocol only: a file written to the scratch dir comes back."""
    with box.scratch() as scratch:
        report = scratch / "junit.xml"
        code = f"import os, pathlib; pathlib.Path({str(report)!r}).write_text('ok'); print(os.environ['HOME'])"
        result = box.run(py(code), cwd=ws, timeout=30, scratch=scratch)
        assert result.exit_code == 0, result.stderr
        return scratch, report.read_text(), result.stdout.strip()


def test_a_file_written_to_the_scratch_dir_reaches_the_host_and_goes_on_exit(sandbox: LocalSandbox, ws: Path) -> None:
    scratch, content, home = _write_a_report(sandbox, ws)
    assert content == "ok"
    assert home == str(scratch / "home")
    assert not scratch.exists()
    assert scratch.parent.stat().st_mode & 0o077 == 0  # the scratch root is private to this user


def test_a_planted_scratch_root_is_refused_as_a_configuration_problem(ws: Path, tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    planted.symlink_to(tmp_path)
    sandbox = LocalSandbox(ws, LocalConfig(use_bwrap=False, scratch_dir=planted))
    with pytest.raises(SandboxConfigError, match="is a link or belongs to another user"):
        sandbox.run(py("print(1)"), cwd=ws, timeout=30)


def test_secrets_in_the_environment_do_not_reach_the_command(
    sandbox: LocalSandbox, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("SOME_RANDOM_SETTING", "x")
    result = sandbox.run(py("import os; print(sorted(os.environ))"), cwd=ws, timeout=30, env={"MY_FLAG": "1"})
    assert "OPENAI_API_KEY" not in result.stdout
    assert "GITHUB_TOKEN" not in result.stdout
    assert "SOME_RANDOM_SETTING" not in result.stdout
    assert "MY_FLAG" in result.stdout


def test_home_and_tmpdir_are_fresh_dirs_removed_afterwards(sandbox: LocalSandbox, ws: Path) -> None:
    code = "import os; open(os.path.join(os.environ['TMPDIR'], 'mark'), 'w').close(); print(os.environ['HOME'])"
    with sandbox.scratch() as scratch:
        result = sandbox.run(py(code), cwd=ws, timeout=30, scratch=scratch)
        assert result.exit_code == 0, result.stderr
        home = result.stdout.strip()
        assert home != str(Path.home())
        assert (scratch / "tmp" / "mark").is_file()
    assert not Path(home).exists()
    assert not scratch.exists()


SOCKET_TEST = """
import socket

def test_unix_server_binds(tmp_path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "server.sock"))
    server.listen()
"""


@pytest.mark.parametrize("use_bwrap", [True, False], ids=["bwrap", "plain"])
def test_a_test_binding_a_unix_socket_in_tmp_path_passes_as_under_bare_pytest(ws: Path, use_bwrap: bool) -> None:
    """A socket path has at most 107 bytes. Under bubblewrap the tests' TMPDIR is /tmp, as for bare pytest, whatever
    the scratch root (here as long as a 7-digit uid's) and user name; under plain local it is only
    `<scratch root>/run-XXXXXXXX/tmp` (here uid 1000's root and user `alice`: 103 bytes to the socket)."""
    if use_bwrap and not BWRAP_OK:
        pytest.skip("bubblewrap is not installed or cannot make namespaces")
    (ws / "test_sock.py").write_text(SOCKET_TEST)
    # as long as `skillbank-1000000-local` or `skillbank-1000-local`
    root = Path(tempfile.mkdtemp(prefix="skillbank-1000000-" if use_bwrap else "skillbank-1000-", dir="/tmp"))
    user = "ci-runner-01" if use_bwrap else "alice"
    try:
        box = LocalSandbox(
            ws, LocalConfig(use_bwrap=use_bwrap, scratch_dir=root), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)]
        )
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_sock.py"]
        result = box.run(argv, cwd=ws, timeout=60, env={"USER": user})
        assert result.exit_code == 0, result.stdout[-2000:]
        tmpdir = box.run(py("import os; print(os.environ['TMPDIR'])"), cwd=ws, timeout=30).stdout.strip()
        assert tmpdir == "/tmp" if use_bwrap else len(tmpdir) == len(f"{root}/run-XXXXXXXX/tmp")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_nonzero_exit_is_data_not_an_exception(sandbox: LocalSandbox, ws: Path) -> None:
    result = sandbox.run(py("import sys; print('bye'); sys.exit(3)"), cwd=ws, timeout=30)
    assert result.exit_code == 3
    assert result.stdout == "bye\n"
    assert not result.timed_out


def test_death_by_signal_is_reported_shell_style(sandbox: LocalSandbox, ws: Path) -> None:
    result = sandbox.run(py("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"), cwd=ws, timeout=30)
    assert result.exit_code == 128 + 11


def test_missing_program_exits_127_with_a_message(sandbox: LocalSandbox, ws: Path) -> None:
    result = sandbox.run(["no-such-program-here"], cwd=ws, timeout=30)
    assert result.exit_code == 127


def test_output_is_capped_to_its_tail_and_fully_counted(ws: Path) -> None:
    sandbox = LocalSandbox(ws, LocalConfig(max_output_bytes=4096, use_bwrap=False))
    code = "import sys; sys.stdout.write('a' * 1_000_000 + 'THE END'); sys.stderr.write('e' * 10_000)"
    result = sandbox.run(py(code), cwd=ws, timeout=30)
    assert result.stdout.endswith("THE END")
    assert len(result.stdout) == 4096
    assert result.stdout_bytes == 1_000_007
    assert result.stderr_bytes == 10_000
    assert result.truncated


def test_timeout_kills_the_whole_process_tree(sandbox: LocalSandbox, ws: Path, live_processes) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    child = [sys.executable, "-c", "import time; time.sleep(300)", marker]
    code = f"import subprocess, time; subprocess.Popen({child!r}); time.sleep(300)"
    result = sandbox.run(py(code), cwd=ws, timeout=1)
    assert result.timed_out
    assert result.exit_code is None
    assert live_processes(marker) == []


def test_processes_left_behind_by_a_finished_command_are_killed(ws: Path, live_processes) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    sandbox = LocalSandbox(ws, LocalConfig(use_bwrap=False))
    child = [sys.executable, "-c", "import time; time.sleep(300)", marker]
    code = f"import subprocess; subprocess.Popen({child!r}, start_new_session=True)"
    result = sandbox.run(py(code), cwd=ws, timeout=30)
    assert result.exit_code == 0
    assert not result.timed_out
    group = PidsCgroup.create(8)
    if group is not None:  # a process that left its session is only found through the cgroup
        group.remove()
        assert result.killed_leftovers
        assert live_processes(marker) == []


def test_memory_rlimit_turns_a_huge_allocation_into_memory_error(ws: Path) -> None:
    sandbox = LocalSandbox(ws, LocalConfig(max_memory_mb=1024, use_bwrap=False))
    result = sandbox.run(py("b = b'x' * (10 * 1024**3)"), cwd=ws, timeout=30)
    assert result.exit_code == 1
    assert "MemoryError" in result.stderr


def test_file_size_rlimit_stops_a_runaway_file(ws: Path) -> None:
    sandbox = LocalSandbox(ws, LocalConfig(max_file_mb=1, use_bwrap=False))
    code = "open('big.bin', 'wb').write(b'x' * (4 * 1024 * 1024))"
    result = sandbox.run(py(code), cwd=ws, timeout=30)
    assert result.exit_code != 0
    assert (ws / "big.bin").stat().st_size <= 1024 * 1024


def test_plain_local_warns_that_network_and_files_are_not_fenced(ws: Path) -> None:
    sandbox = LocalSandbox(ws, LocalConfig(use_bwrap=False))
    assert sandbox.name == "local"
    assert any("network could not be cut" in w for w in sandbox.warnings)
    assert any("outside the workspace" in w for w in sandbox.warnings)


@needs_bwrap
def test_bubblewrap_makes_everything_outside_the_workspace_read_only(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    sandbox = LocalSandbox(ws, ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])
    code = f"import pathlib; pathlib.Path('inside.txt').write_text('ok'); pathlib.Path({str(outside)!r}).unlink()"
    result = sandbox.run(py(code), cwd=ws, timeout=30)
    assert sandbox.name == "local+bwrap"
    assert result.exit_code == 1
    assert outside.read_text() == "keep me"
    assert (ws / "inside.txt").read_text() == "ok"


@needs_bwrap
def test_bubblewrap_cuts_the_network(ws: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        sandbox = LocalSandbox(ws, ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        result = sandbox.run(py(code), cwd=ws, timeout=30)
        assert "ConnectionRefusedError" in result.stderr
        with pytest.raises(BlockingIOError):
            server.accept()


@needs_bwrap
def test_bubblewrap_hides_the_real_home(ws: Path) -> None:
    home = Path.home().resolve()
    if home == Path("/") or not home.is_dir() or not any(home.iterdir()) or ws.is_relative_to(home):
        pytest.skip("needs a non-empty HOME that does not hold the workspace")
    sandbox = LocalSandbox(ws)
    result = sandbox.run(["ls", "-A", str(home)], cwd=ws, timeout=30)
    assert result.exit_code == 0
    assert result.stdout == ""


@needs_bwrap
def test_interpreter_dirs_under_tmp_stay_visible_read_only(ws: Path, tmp_path: Path) -> None:
    """A checkout or virtualenv under /tmp (as CI may have) is not hidden by the sandbox's fresh /tmp."""
    tool_dir = tmp_path / "venv-under-tmp"
    tool_dir.mkdir()
    (tool_dir / "marker.txt").write_text("visible")
    box = LocalSandbox(ws, LocalConfig(use_bwrap=True), ro_paths=[Path(sys.prefix), Path(sys.base_prefix), tool_dir])
    code = f"from pathlib import Path; p = Path({str(tool_dir / 'marker.txt')!r}); print(p.read_text())\n"
    code += "try:\n    p.write_text('x')\nexcept OSError:\n    print('read-only')\n"
    result = box.run(py(code), cwd=ws, timeout=30)
    assert result.stdout.split() == ["visible", "read-only"], result.stderr


@needs_bwrap
def test_a_workspace_venv_linked_to_a_venv_under_tmp_runs_under_bubblewrap(ws: Path, tmp_path: Path) -> None:
    """What a `--candidates` copy does: its `.venv` links to the project's venv, here under the hidden /tmp."""
    real = tmp_path / "project" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(real)], check=True)
    (ws / ".venv").symlink_to(real, target_is_directory=True)
    found = find_interpreter(ws)
    box = LocalSandbox(ws, LocalConfig(), ro_paths=found.roots)
    result = box.run([str(found.path), "-c", "import sys; print(sys.prefix)"], cwd=ws, timeout=30)
    assert (result.exit_code, result.stdout.strip()) == (0, str(ws / ".venv")), result.stderr
