"""The dirs a test python's `.pth` files add (editable installs of sibling projects) under bubblewrap: followed for
the operator's interpreter, never into the operator's secrets, and named in the warnings where a workspace venv's
are not."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from sandbox.exec.interpreter import find_interpreter
from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_tests
from tests.sandbox.conftest import bwrap_works

needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed or cannot make namespaces")

TEST_LIB = "from libpkg import answer\n\ndef test_answer():\n    assert answer() == 42\n"


def make_venv(where: Path) -> Path:
    """A venv without pip whose pytest comes from this interpreter's site-packages; returns its site dir."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next((where / "lib").glob("python3*/site-packages"))
    (site / "host.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return site


def make_lib(root: Path) -> Path:
    """A `libpkg` package in `root/src`, outside any workspace; returns the package dir."""
    package = root / "src" / "libpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def answer():\n    return 42\n")
    return package


def make_app(mono: Path) -> Path:
    app = mono / "app"
    (app / "tests").mkdir(parents=True)
    (app / "tests" / "test_app.py").write_text(TEST_LIB)
    return app


@needs_bwrap
def test_an_editable_sibling_of_the_configured_test_python_is_importable(tmp_path: Path) -> None:
    mono = tmp_path / "mono"
    site = make_venv(mono / ".venv")
    (site / "__editable__.libpkg-0.1.pth").write_text(f"{make_lib(mono / 'libpkg').parent}\n")
    config = RunnerConfig(test_python=str(mono / ".venv" / "bin" / "python"))
    result = run_tests(make_app(mono), backend="local", config=config)
    assert result.backend == "local+bwrap"
    assert (result.status, result.passed) == ("passed", 1), result.output_tail


@needs_bwrap
def test_a_setuptools_editable_finder_of_the_configured_test_python_is_importable(tmp_path: Path) -> None:
    """PEP 660 strict editable installs: the `.pth` file imports a finder whose MAPPING names the package dir."""
    mono = tmp_path / "mono"
    site = make_venv(mono / ".venv")
    package = make_lib(mono / "libpkg")
    finder = "__editable___libpkg_0_1_finder"
    (site / "__editable__.libpkg-0.1.pth").write_text(f"import {finder}; {finder}.install()\n")
    (site / f"{finder}.py").write_text(
        "import sys\n"
        f"MAPPING: dict[str, str] = {{'libpkg': {str(package)!r}}}\n"
        "NAMESPACES: dict[str, list[str]] = {}\n"
        "def install():\n"
        "    sys.path.append(MAPPING['libpkg'].rsplit('/', 1)[0])\n"
    )
    config = RunnerConfig(test_python=str(mono / ".venv" / "bin" / "python"))
    result = run_tests(make_app(mono), backend="local", config=config)
    assert (result.status, result.passed) == ("passed", 1), result.output_tail


@needs_bwrap
def test_a_workspace_venv_pth_entry_outside_the_workspace_is_named_in_the_warnings_with_the_way_out(
    tmp_path: Path,
) -> None:
    mono = tmp_path / "mono"
    lib = make_lib(mono / "libpkg").parent
    app = make_app(mono)
    site = make_venv(app / ".venv")
    (site / "__editable__.libpkg-0.1.pth").write_text(f"{lib}\n")
    result = run_tests(app, backend="local", config=RunnerConfig())
    assert result.status == "error"
    [warning] = [w for w in result.warnings if str(lib) in w]
    assert "SKILLBANK_TEST_PYTHON" in warning
    assert "__editable__.libpkg-0.1.pth" in warning


def test_a_pth_file_of_a_test_python_inside_the_workspace_opens_no_host_dir(tmp_path: Path) -> None:
    """Such a .pth file is the agent's to rewrite: only dirs inside the workspace and the interpreter count."""
    outside = make_lib(tmp_path / "libpkg").parent
    ws = tmp_path / "ws"
    site = make_venv(ws / "tools" / ".venv")
    (ws / "src").mkdir()
    (site / "paths.pth").write_text(f"{outside}\n{ws / 'src'}\n")
    interpreter = find_interpreter(ws, str(ws / "tools" / ".venv" / "bin" / "python"))
    assert not any(outside.is_relative_to(root) for root in interpreter.roots)
    assert (site / "paths.pth", outside) in interpreter.pth_dropped
    assert ws / "src" in interpreter.roots or any((ws / "src").is_relative_to(r) for r in interpreter.roots)


def test_a_pth_entry_into_a_home_dotdir_or_the_data_dir_is_refused_and_warned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / "projects" / "lib").mkdir(parents=True)
    data = tmp_path / "skillbank-data"
    data.mkdir()
    monkeypatch.setenv("HOME", str(home))
    ws = tmp_path / "ws"
    ws.mkdir()
    site = make_venv(tmp_path / "venv")
    (site / "paths.pth").write_text(f"{home / '.ssh'}\n{home}\n{data}\n{home / 'projects' / 'lib'}\n")
    interpreter = find_interpreter(ws, str(tmp_path / "venv" / "bin" / "python"), hidden=[data])
    assert not any(root.is_relative_to(home / ".ssh") or home.is_relative_to(root) for root in interpreter.roots)
    assert not any(root.is_relative_to(data) for root in interpreter.roots)
    assert home / "projects" / "lib" in interpreter.roots
    refused = [entry for _, entry in interpreter.pth_refused]
    assert refused == [home / ".ssh", home, data]
