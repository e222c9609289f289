"""Host unix sockets reachable at a path other than the one they were bound to stay out of the bubblewrap sandbox.

`/proc/net/unix` lists the name a socket was bound to: not the path of one bound by a relative name, renamed or
moved after `bind()`, or hard-linked. Each test starts a real server process on the host, checks from the host that
it answers, then connects to it from inside the sandbox.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandbox.exec.local import LocalConfig, LocalSandbox, probe_bwrap
from sandbox.exec.unix_sockets import BoundSocket, bound_sockets, locate, unlocated_view

BWRAP = shutil.which("bwrap")
BWRAP_OK = BWRAP is not None and probe_bwrap(BWRAP) is None
needs_bwrap = pytest.mark.skipif(not BWRAP_OK, reason="bubblewrap is not installed or cannot make namespaces")

#: A host server: binds argv[1] (relative to its cwd), then renames it to argv[2] (`rename`) or links it there
#: (`link`), prints `ready` and answers every connection with `hello from the host`.
SERVER = """
import os, socket, sys
name, then, how = sys.argv[1:4]
server = socket.socket(socket.AF_UNIX)
server.bind(name)
server.listen()
if how == "rename":
    os.rename(name, then)
elif how == "link":
    os.link(name, then)
elif how == "unlink":
    os.unlink(name)
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    conn.sendall(b"hello from the host")
    conn.close()
"""

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


Serve = Callable[..., None]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Starts `SERVER` processes (`serve(cwd, name, then, how)`) and kills each by its pid afterwards."""
    procs: list[subprocess.Popen[str]] = []

    def start(cwd: Path, name: str, then: str = "", how: str = "") -> None:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, name, then, how], cwd=cwd, stdout=subprocess.PIPE, text=True
        )
        procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"

    yield start
    for proc in procs:
        proc.kill()
        proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


def answers(path: Path) -> str:
    """What the server at `path` says, from the host: proves it is up and that the path reaches it."""
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(5)
        client.connect(str(path))
        return client.recv(100).decode()


def connect_from_sandbox(ws: Path, path: Path) -> list[str]:
    sandbox = LocalSandbox(ws, LocalConfig(use_bwrap=True), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])
    result = sandbox.run([sys.executable, "-c", CONNECT, str(path)], cwd=ws, timeout=30)
    assert result.exit_code == 0, result.stderr
    return result.stdout.split()


@needs_bwrap
def test_a_host_socket_bound_by_a_relative_name_cannot_be_reached(ws: Path, outside_dir: Path, serve: Serve) -> None:
    serve(outside_dir, "rel.sock")
    assert answers(outside_dir / "rel.sock") == "hello from the host"
    assert connect_from_sandbox(ws, outside_dir / "rel.sock")[0] == "blocked"


@needs_bwrap
def test_a_host_socket_renamed_after_bind_cannot_be_reached(ws: Path, outside_dir: Path, serve: Serve) -> None:
    serve(outside_dir, str(outside_dir / "before.sock"), str(outside_dir / "after.sock"), "rename")
    assert answers(outside_dir / "after.sock") == "hello from the host"
    assert connect_from_sandbox(ws, outside_dir / "after.sock")[0] == "blocked"


@needs_bwrap
def test_a_hard_link_to_a_host_socket_cannot_be_reached(ws: Path, outside_dir: Path, serve: Serve) -> None:
    serve(outside_dir, str(outside_dir / "bound.sock"), str(outside_dir / "link.sock"), "link")
    assert answers(outside_dir / "link.sock") == "hello from the host"
    assert connect_from_sandbox(ws, outside_dir / "link.sock")[0] == "blocked"
    assert connect_from_sandbox(ws, outside_dir / "bound.sock")[0] == "blocked"


@needs_bwrap
def test_a_hard_link_to_a_host_socket_in_another_dir_cannot_be_reached(
    ws: Path, outside_dir: Path, serve: Serve
) -> None:
    (outside_dir / "sub").mkdir()
    serve(outside_dir, str(outside_dir / "bound.sock"), str(outside_dir / "sub" / "link.sock"), "link")
    assert answers(outside_dir / "sub" / "link.sock") == "hello from the host"
    assert connect_from_sandbox(ws, outside_dir / "sub" / "link.sock")[0] == "blocked"


@needs_bwrap
def test_a_deleted_host_socket_hides_nothing(ws: Path, outside_dir: Path, serve: Serve) -> None:
    """A server whose socket file was deleted listens on, reachable by no path: the run's view stays whole."""
    serve(outside_dir, str(outside_dir / "gone.sock"), "", "unlink")
    sandbox = LocalSandbox(ws, LocalConfig(use_bwrap=True), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])
    result = sandbox.run(["ls", str(outside_dir.parent)], cwd=ws, timeout=30)
    assert result.exit_code == 0, result.stderr
    assert outside_dir.name in result.stdout.split()
    assert not [w for w in sandbox.warnings if "hidden from the tests" in w]


@needs_bwrap
def test_a_host_socket_bound_by_a_relative_name_in_the_workspace_is_masked_in_place(ws: Path, serve: Serve) -> None:
    """A server started in the workspace: its relative name is found there, so nothing else needs hiding."""
    serve(ws, "dev.sock")
    assert answers(ws / "dev.sock") == "hello from the host"
    sandbox = LocalSandbox(ws, LocalConfig(use_bwrap=True), ro_paths=[Path(sys.prefix), Path(sys.base_prefix)])
    result = sandbox.run([sys.executable, "-c", CONNECT, str(ws / "dev.sock")], cwd=ws, timeout=30)
    assert result.stdout.split() == ["blocked", "ConnectionRefusedError"], result.stderr


def test_sock_diag_gives_each_bound_socket_its_file(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        found = bound_sockets()
        if found is None:
            pytest.skip("this kernel has no unix sock_diag")
        info = path.lstat()
        assert any(b.name == str(path) and (b.dev, b.ino) == (info.st_dev, info.st_ino & 0xFFFFFFFF) for b in found)


def ours(tmp_path: Path) -> list[BoundSocket]:
    found = bound_sockets()
    if found is None:
        pytest.skip("this kernel has no unix sock_diag")
    return [b for b in found if b.name.startswith(str(tmp_path)) or not b.name.startswith("/")]


def test_renamed_and_linked_sockets_are_found_in_their_dir(tmp_path: Path) -> None:
    servers = [socket.socket(socket.AF_UNIX) for _ in range(3)]
    try:
        for server, name in zip(servers, ("plain", "moved", "linked"), strict=True):
            server.bind(str(tmp_path / name))
        (tmp_path / "moved").rename(tmp_path / "renamed")
        os.link(tmp_path / "linked", tmp_path / "second")
        paths, unlocated = locate(ours(tmp_path), [])
    finally:
        for server in servers:
            server.close()
    assert paths == [tmp_path / name for name in ("linked", "plain", "renamed", "second")]
    assert unlocated == set()


def test_a_link_in_another_dir_leaves_its_device_unlocated_and_a_deleted_socket_does_not(tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    linked, deleted = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
    try:
        linked.bind(str(tmp_path / "linked"))
        os.link(tmp_path / "linked", tmp_path / "other" / "link")
        deleted.bind(str(tmp_path / "deleted"))
        (tmp_path / "deleted").unlink()  # it listens on, reachable by no path
        found = ours(tmp_path)
        assert {b.name for b in found} == {str(tmp_path / "linked"), str(tmp_path / "deleted")}
        assert locate([b for b in found if b.name.endswith("deleted")], []) == ([], set())
        assert locate(found, []) == ([tmp_path / "linked"], {tmp_path.stat().st_dev})
    finally:
        linked.close()
        deleted.close()


def test_a_name_bound_relative_to_its_servers_working_dir_is_found_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("relative.sock")  # by this process, whose working dir is no dir the sandbox shows
        found = [b for b in ours(tmp_path) if b.name == "relative.sock"]
        assert locate(found, [tmp_path.parent]) == ([tmp_path / "relative.sock"], set())


def test_an_unlocated_device_is_hidden_but_for_the_dirs_the_run_needs(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "other").mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "beside.sock"))
        hide, masks = unlocated_view({tmp_path.stat().st_dev}, needed=[tmp_path / "ws"], skip=[])
    assert tmp_path / "other" in hide
    assert not any(p == tmp_path / "ws" or (tmp_path / "ws").is_relative_to(p) for p in hide)
    assert tmp_path / "beside.sock" in masks
