"""A pytest config above the workspace (a monorepo's root) works under bubblewrap as under bare pytest: the file
pytest would take, and the conftest.py files between it and the workspace, are shown read-only; nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.testing.config import RunnerConfig
from sandbox.testing.parent_config import parent_config_files
from sandbox.testing.runner import run_tests
from tests.sandbox.conftest import bwrap_works


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def mono(tmp_path: Path) -> Path:
    """mono/pyproject.toml sets `pythonpath = ["svc/src"]`; mono/conftest.py gives a fixture; workspace: mono/svc."""
    root = tmp_path / "mono"
    write(root / "pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["svc/src"]\n')
    write(root / "conftest.py", "import pytest\n\n@pytest.fixture\ndef region():\n    return 'eu'\n")
    write(root / "svc" / "src" / "svcpkg" / "__init__.py", "NAME = 'svc'\n")
    write(root / "svc" / "tests" / "test_svc.py", "import svcpkg\n\ndef test_svc(region):\n    assert svcpkg.NAME\n")
    write(root / "other" / "secret.txt", "not for the tests\n")
    return root


@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed or cannot make namespaces")
def test_a_pytest_config_above_the_workspace_is_found_under_bubblewrap(mono: Path, runner_config: RunnerConfig) -> None:
    result = run_tests(mono / "svc", backend="local", config=runner_config)
    assert result.backend == "local+bwrap"
    assert (result.status, result.passed) == ("passed", 1), result.output_tail
    other = run_tests(mono / "svc", backend="local", config=runner_config, command=f"cat {mono / 'other/secret.txt'}")
    assert "not for the tests" not in other.output_tail


def test_only_the_config_pytest_takes_and_the_conftests_below_it_are_shown(mono: Path) -> None:
    write(mono / "svc" / "conftest.py", "")  # inside the workspace: already shown
    mid = mono / "svc" / "pkg"
    write(mid / "setup.cfg", "[metadata]\nname = x\n")  # no [tool:pytest]: pytest goes on
    write(mid / "tox.ini", "[tox]\nenvlist = py\n")
    assert parent_config_files(mid / "inner") == []  # not a dir: nothing
    (mid / "inner").mkdir()
    assert parent_config_files(mid / "inner") == [
        mono / "pyproject.toml",
        mono / "conftest.py",
        mono / "svc" / "conftest.py",
    ]
    write(mono / "svc" / "pytest.ini", "")  # pytest.ini counts even when empty, and stops the search
    assert parent_config_files(mid / "inner") == [mono / "svc" / "pytest.ini", mono / "svc" / "conftest.py"]


def test_a_workspace_with_its_own_pytest_config_is_shown_nothing_above_it(mono: Path) -> None:
    write(mono / "svc" / "pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-q"\n')
    assert parent_config_files(mono / "svc") == []


def test_a_pyproject_without_pytest_settings_is_taken_only_when_no_config_is_found(tmp_path: Path) -> None:
    write(tmp_path / "a" / "pyproject.toml", "[project]\nname = 'a'\n")
    write(tmp_path / "a" / "b" / "c" / "placeholder", "")
    assert parent_config_files(tmp_path / "a" / "b" / "c") == [tmp_path / "a" / "pyproject.toml"]
    write(tmp_path / "a" / "b" / "tox.ini", "[pytest]\naddopts = -q\n")
    assert parent_config_files(tmp_path / "a" / "b" / "c") == [tmp_path / "a" / "b" / "tox.ini"]


def test_a_config_in_home_or_above_it_is_never_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    write(home / "setup.cfg", "[tool:pytest]\naddopts = -q\n")
    write(home / "conftest.py", "")
    write(tmp_path / "pytest.ini", "")
    (home / "project").mkdir()
    assert parent_config_files(home / "project") == []
