"""What bubblewrap hides although the host is bound read-only: host unix sockets, runtime dirs, and `.git`."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.exec.local import LocalConfig, LocalSandbox, probe_bwrap
from sandbox.exec.view import git_dirs_outside, git_guard, runtime_args, socket_masks
from tests.sandbox.conftest import git as git_checked

BWRAP = shutil.which("bwrap")
BWRAP_OK = BWRAP is not None and probe_bwrap(BWRAP) is None
needs_bwrap = pytest.mark.skipif(not BWRAP_OK, reason="bubblewrap is not installed or cannot make namespaces")

CONNECT = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
    print("REACHED", s.recv(100).decode())
except OSError as exc:
    print("blocked", type(exc).__name__)
"""


@contextlib.contextmanager
def listening(path: Path) -> Iterator[list[bytes]]:
    """A host unix socket at `path` that answers `hello from the host`; yields what connections it accepted."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    accepted: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(b"x")
            conn.sendall(b"hello from the host")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield accepted
    finally:
        server.shutdown(socket.SHUT_RDWR)
        server.close()
        path.unlink(missing_ok=True)
        thread.join(5)


def box(ws: Path) -> LocalSandbox:
    return LocalSandbox(ws, LocalConfig(use_bwrap=True), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])


@needs_bwrap
def test_a_host_unix_socket_outside_tmp_and_home_cannot_be_reached(ws: Path, outside_dir: Path) -> None:
    path = outside_dir / "docker.sock"
    with listening(path) as accepted:
        result = box(ws).run([sys.executable, "-c", CONNECT, str(path)], cwd=ws, timeout=30)
    assert result.stdout.split() == ["blocked", "ConnectionRefusedError"], result.stderr
    assert accepted == []


@needs_bwrap
def test_a_host_unix_socket_inside_the_workspace_cannot_be_reached(ws: Path) -> None:
    path = ws / "dev.sock"
    with listening(path) as accepted:
        result = box(ws).run([sys.executable, "-c", CONNECT, str(path)], cwd=ws, timeout=30)
    assert result.stdout.split() == ["blocked", "ConnectionRefusedError"], result.stderr
    assert accepted == []


@needs_bwrap
def test_the_runtime_dirs_are_empty_inside_the_sandbox(
    ws: Path, outside_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = outside_dir / "user-runtime"
    runtime.mkdir()
    (runtime / "keyring").write_text("secret")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    code = (
        "import os, sys; print(os.listdir(sys.argv[1]));"
        "print(all(os.path.islink('/run/' + n) for n in os.listdir('/run')))"
    )
    result = box(ws).run([sys.executable, "-c", code, str(runtime)], cwd=ws, timeout=30)
    assert result.stdout.split() == ["[]", "True"], result.stderr


@needs_bwrap
def test_the_tests_own_unix_sockets_still_work(ws: Path) -> None:
    code = """
import os, socket
path = os.path.join(os.environ["TMPDIR"], "own.sock")
server = socket.socket(socket.AF_UNIX); server.bind(path); server.listen()
client = socket.socket(socket.AF_UNIX); client.connect(path)
conn, _ = server.accept(); conn.sendall(b"ok"); print(client.recv(2).decode())
a, b = socket.socketpair(); a.sendall(b"pair"); print(b.recv(4).decode())
"""
    result = box(ws).run([sys.executable, "-c", code], cwd=ws, timeout=30)
    assert result.stdout.split() == ["ok", "pair"], result.stderr


def test_runtime_links_are_made_again_over_the_empty_tmpfs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "shm").symlink_to("/dev/shm")
    (run / "docker.sock").write_text("")
    assert runtime_args([run]) == ["--tmpfs", str(run), "--symlink", "/dev/shm", str(run / "shm")]


def test_sockets_are_masked_where_the_sandbox_would_see_them(tmp_path: Path) -> None:
    home, venv, data, ws = tmp_path / "home", tmp_path / "home" / "venv", tmp_path / "data", tmp_path / "ws"
    sockets = [home / "bus", venv / "s", data / "s", ws / "s", Path("/srv/db.sock")]
    args, left_out = socket_masks(sockets, covered=[home], shown=[venv, ws], unseen=[data])
    masked = [args[i + 2] for i in range(0, len(args), 3)]
    assert masked == [str(venv / "s"), str(ws / "s"), "/srv/db.sock"]
    assert left_out == 0


def git(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ws), *args], capture_output=True, text=True)


@needs_bwrap
def test_a_workspace_without_git_cannot_be_made_a_repo_by_the_tests(ws: Path) -> None:
    code = "import os; os.makedirs('.git/hooks'); open('.git/config', 'w').write('[filter \"x\"]')"
    result = box(ws).run([sys.executable, "-c", code], cwd=ws, timeout=30)
    assert result.exit_code == 1
    assert "Read-only file system" in result.stderr
    assert not os.path.lexists(ws / ".git")  # the empty mount point is gone again


@needs_bwrap
def test_a_worktree_git_file_and_the_gitdir_it_names_stay_read_only(ws: Path) -> None:
    gitdir = ws / "meta"
    gitdir.mkdir()
    (gitdir / "config").write_text("[core]\n")
    (ws / ".git").write_text("gitdir: meta\n")
    code = """
import os
for action in (lambda: open('.git', 'w').write('gitdir: evil'), lambda: os.rename('.git', 'old'),
               lambda: open('meta/config', 'a').write('[filter "x"]')):
    try:
        action(); print("changed")
    except OSError as exc:
        print("refused")
"""
    result = box(ws).run([sys.executable, "-c", code], cwd=ws, timeout=30)
    assert result.stdout.split() == ["refused"] * 3, result.stderr
    assert (ws / ".git").read_text() == "gitdir: meta\n"
    assert (gitdir / "config").read_text() == "[core]\n"


@needs_bwrap
def test_a_git_repo_still_works_read_only_inside_the_sandbox(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\n")
    for args in (["init", "-q"], ["add", "a.py"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "i"]):
        assert git(ws, *args).returncode == 0
    result = box(ws).run(["git", "log", "--format=%s"], cwd=ws, timeout=30)
    assert result.stdout == "i\n", result.stderr


def test_the_git_mount_point_stays_while_another_run_uses_it(ws: Path, tmp_path: Path) -> None:
    locks = tmp_path / "locks"
    locks.mkdir()
    with contextlib.ExitStack() as first:
        args = first.enter_context(git_guard(ws, locks))
        assert args[-2:] == ["--remount-ro", str(ws / ".git")]
        (ws / ".git").mkdir()  # what bubblewrap does for the first run's mount
        second = git_guard(ws, locks)
        assert second.__enter__() == args
        first.close()
        assert (ws / ".git").is_dir()  # the second run still has its mount there
        second.__exit__(None, None, None)
    assert not os.path.lexists(ws / ".git")
    assert list(locks.iterdir()) == []  # nor are its lock and marker files left


def test_a_lock_file_left_by_a_killed_server_is_swept_but_a_held_one_is_kept(ws: Path, tmp_path: Path) -> None:
    import fcntl

    from sandbox.exec.view import sweep_git_locks

    (tmp_path / "git-0123456789abcdef.lock").write_text("")  # its server died mid-run
    held = tmp_path / "git-fedcba9876543210.lock"
    fd = os.open(held, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        assert sweep_git_locks(tmp_path) == 1
        assert [p.name for p in tmp_path.glob("git-*")] == [held.name]
    finally:
        os.close(fd)


def test_an_empty_git_dir_the_user_made_is_left_alone(ws: Path, tmp_path: Path) -> None:
    (ws / ".git").mkdir()
    with git_guard(ws, tmp_path):
        pass
    assert (ws / ".git").is_dir()


def test_a_workspace_the_user_cannot_write_gets_no_git_mount_point(tmp_path: Path) -> None:
    from sandbox.exec.view import git_args

    ws = tmp_path / "ro-ws"
    ws.mkdir()
    ws.chmod(0o555)
    try:
        if os.access(ws, os.W_OK):
            pytest.skip("root writes anywhere")
        assert git_args(ws) == []
    finally:
        ws.chmod(0o755)


#: What a test of a git tool (setuptools-scm, versioneer) does: read its repo, then try to write into its git dir.
GIT_PROBE = """
import pathlib, subprocess, sys
top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True)
print(top.returncode, top.stdout.strip() or top.stderr.strip())
try:
    (pathlib.Path(sys.argv[1]) / "planted").write_text("x")
    print("WROTE")
except OSError:
    print("read-only")
"""


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "sub").mkdir()
    (path / "sub" / "m.py").write_text("x = 1\n")
    git_checked(path, "init", "-q")
    git_checked(path, "add", "-A")
    git_checked(path, "commit", "-qm", "one")
    return path


@needs_bwrap
def test_git_works_read_only_in_a_worktree_whose_repo_lies_under_the_hidden_tmp(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main")
    wt = tmp_path / "wt"
    git_checked(main, "worktree", "add", "-q", str(wt))
    result = box(wt).run([sys.executable, "-c", GIT_PROBE, str(main / ".git")], cwd=wt, timeout=30)
    assert result.stdout.split() == ["0", str(wt), "read-only"], result.stderr
    assert not (main / ".git" / "planted").exists()


@needs_bwrap
def test_git_works_read_only_in_a_subdir_of_a_repo_under_the_hidden_tmp(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main")
    ws = main / "sub"
    result = box(ws).run([sys.executable, "-c", GIT_PROBE, str(main / ".git")], cwd=ws, timeout=30)
    assert result.stdout.split() == ["0", str(main), "read-only"], result.stderr
    assert not (main / ".git" / "planted").exists()


def test_no_git_dir_outside_the_workspace_is_shown_but_a_real_one_of_a_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dotfiles repo of HOME (its objects are HOME's files) or a `gitdir:` naming a dir that is no git dir (a
    `~/.ssh`) is never shown; the repo of a project inside HOME is, as its `.git` only."""
    home = _repo(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home))
    assert git_dirs_outside(home / "sub") == []
    ssh = home / ".ssh"
    ssh.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {ssh}\n")
    assert git_dirs_outside(ws) == []
    project = _repo(home / "src" / "project")
    assert git_dirs_outside(project / "sub") == [project / ".git"]
    assert git_dirs_outside(project) == []
