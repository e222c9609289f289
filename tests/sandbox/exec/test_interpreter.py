"""Which host dirs a workspace's own venv makes the sandbox show: only real Python installs, never HOME content."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from sandbox.errors import InterpreterNotFound
from sandbox.exec.interpreter import find_interpreter

REAL_PYTHON = Path(sys.executable).resolve()


def _workspace_venv(ws: Path, cfg_home: Path) -> None:
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "bin" / "python").symlink_to(sys.executable)
    (ws / ".venv" / "pyvenv.cfg").write_text(f"home = {cfg_home}\n")


def _fake_prefix(prefix: Path, *, stdlib: bool) -> None:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / f"python{version}").symlink_to(REAL_PYTHON)
    if stdlib:
        (prefix / "lib" / f"python{version}").mkdir(parents=True)
        (prefix / "lib" / f"python{version}" / "os.py").write_text("")


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".local" / "share" / "opencode").mkdir(parents=True)
    (home / ".local" / "share" / "opencode" / "auth.json").write_text('{"key": "secret"}')
    monkeypatch.setenv("HOME", str(home))
    return home


def test_a_pyvenv_home_of_dot_local_bin_does_not_show_the_operators_local_share(
    tmp_path: Path, fake_home: Path
) -> None:
    _fake_prefix(fake_home / ".local", stdlib=False)  # `uv python install` leaves bin/python3.X there
    ws = tmp_path / "ws"
    _workspace_venv(ws, fake_home / ".local" / "bin")
    roots = find_interpreter(ws).roots
    assert not any((fake_home / ".local" / "share").is_relative_to(r) for r in roots)


def test_a_real_python_prefix_inside_home_is_shown_as_its_bin_and_lib_only(tmp_path: Path, fake_home: Path) -> None:
    prefix = fake_home / ".pyenv" / "versions" / "3.x"
    _fake_prefix(prefix, stdlib=True)
    (prefix / "share" / "secret.txt").parent.mkdir()
    (prefix / "share" / "secret.txt").write_text("x")
    ws = tmp_path / "ws"
    _workspace_venv(ws, prefix / "bin")
    roots = find_interpreter(ws).roots
    assert prefix / "bin" in roots
    assert prefix / "lib" in roots
    assert not any((prefix / "share").is_relative_to(r) for r in roots)


def test_a_dir_with_a_python_but_no_standard_library_is_not_a_base_install(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    _fake_prefix(tools, stdlib=False)
    (tools / "data.txt").write_text("not python")
    ws = tmp_path / "ws"
    _workspace_venv(ws, tools / "bin")
    assert not any(tools.is_relative_to(r) or r.is_relative_to(tools) for r in find_interpreter(ws).roots)


def test_a_real_python_prefix_outside_home_is_shown_whole(tmp_path: Path, fake_home: Path) -> None:
    prefix = tmp_path / "opt-python"
    _fake_prefix(prefix, stdlib=True)
    ws = tmp_path / "ws"
    _workspace_venv(ws, prefix / "bin")
    assert prefix in find_interpreter(ws).roots


def test_a_fifo_left_as_a_pth_file_in_the_workspace_venv_does_not_block_the_lookup(tmp_path: Path) -> None:
    """The lookup runs on the host before every run: a test that leaves a FIFO there must not hang the next call."""
    ws = tmp_path / "ws"
    _workspace_venv(ws, REAL_PYTHON.parent)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    site = ws / ".venv" / "lib" / f"python{version}" / "site-packages"
    site.mkdir(parents=True)
    os.mkfifo(site / "planted.pth")
    (site / "editable.pth").write_text(f"{ws / 'src'}\n")
    (ws / "src").mkdir()
    found: list[Path] = []
    lookup = threading.Thread(target=lambda: found.append(find_interpreter(ws).path), daemon=True)
    lookup.start()
    lookup.join(10)
    if lookup.is_alive():  # unblock the stuck open() so the thread can end
        with open(site / "planted.pth", "w"):
            pass
    assert found == [ws / ".venv" / "bin" / "python"]


def test_a_workspace_venv_linked_to_a_venv_elsewhere_shows_that_venv(tmp_path: Path) -> None:
    real = tmp_path / "project" / ".venv"
    _workspace_venv(real.parent, REAL_PYTHON.parent)
    ws = tmp_path / "copy"
    ws.mkdir()
    (ws / ".venv").symlink_to(real, target_is_directory=True)
    roots = find_interpreter(ws).roots
    assert real in roots
    assert (ws / ".venv") in roots


def test_a_workspace_venv_linked_to_a_dir_that_is_no_venv_shows_nothing_of_it(tmp_path: Path, fake_home: Path) -> None:
    secrets = fake_home / ".local" / "share" / "opencode"
    (secrets / "bin").mkdir()
    (secrets / "bin" / "python").symlink_to(sys.executable)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".venv").symlink_to(secrets, target_is_directory=True)
    assert not any(root.is_relative_to(fake_home) for root in find_interpreter(ws).roots)
    (ws / ".venv").unlink()
    (ws / ".venv").symlink_to(fake_home, target_is_directory=True)
    (fake_home / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (fake_home / "bin").mkdir()
    (fake_home / "bin" / "python").symlink_to(sys.executable)
    assert fake_home not in find_interpreter(ws).roots  # HOME itself is never shown, venv-like or not


def test_a_test_python_that_fails_to_start_is_reported_with_its_exit_and_its_own_words(tmp_path: Path) -> None:
    shim = tmp_path / "python3.12"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    with pytest.raises(InterpreterNotFound) as caught:
        find_interpreter(ws, str(shim))
    assert "does not run (exit 127: pyenv: python3.12: command not found)" in str(caught.value)
    assert "list index" not in str(caught.value)
