"""The skillbank data dir (other sessions' trajectories) is hidden from the tests in every backend that can hide it."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.exec.local import UNMASKED_WARNING, LocalConfig, LocalSandbox
from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_tests

SECRET = "other sessions' history"
PEEK = """\
from pathlib import Path

import pytest

DB = Path({db!r})


def test_the_data_dir_cannot_be_read():
    with pytest.raises(OSError):
        DB.read_text()


def test_own_files_are_still_there():
    assert Path(__file__).read_text().startswith("from pathlib")
"""


def _data_dir(parent: Path) -> Path:
    home = parent / "skillbank-home"
    (home / "chroma").mkdir(parents=True)
    (home / "trajectories.db").write_text(SECRET)
    (home / "chroma" / "chroma.sqlite3").write_text(SECRET)
    return home


@pytest.fixture
def outside_home_and_tmp() -> Iterator[Path]:
    """A dir neither under HOME nor under /tmp (both are hidden anyway), like SKILLBANK_HOME=/srv/skillbank."""
    base = Path("/var/tmp")
    if not (base.is_dir() and os.access(base, os.W_OK)):
        pytest.skip("/var/tmp is not writable here")
    with tempfile.TemporaryDirectory(dir=base, prefix="skillbank-test-") as made:
        yield Path(made)


BACKENDS = pytest.mark.parametrize("backend_setup", ["local+bwrap", "docker"], indirect=True)


@BACKENDS
def test_a_data_dir_outside_home_cannot_be_read_by_the_tests(
    backend_setup: tuple[str, RunnerConfig, list[Path]], make_workspace, outside_home_and_tmp: Path
) -> None:
    backend, config, discard = backend_setup
    home = _data_dir(outside_home_and_tmp)
    ws = make_workspace({"tests/test_peek.py": PEEK.format(db=str(home / "trajectories.db"))})
    discard.append(ws)
    result = run_tests(ws, backend=backend, config=config.model_copy(update={"hidden_paths": [home]}))
    assert (result.status, result.passed) == ("passed", 2), result.output_tail
    assert (home / "trajectories.db").read_text() == SECRET


@BACKENDS
def test_a_data_dir_inside_the_workspace_cannot_be_read_by_the_tests(
    backend_setup: tuple[str, RunnerConfig, list[Path]], make_workspace
) -> None:
    backend, config, discard = backend_setup
    ws = make_workspace({"tests/test_peek.py": PEEK.format(db=".skillbank/trajectories.db")}, commit=False)
    discard.append(ws)
    (ws / ".skillbank").mkdir()
    (ws / ".skillbank" / "trajectories.db").write_text(SECRET)
    result = run_tests(ws, backend=backend, config=config.model_copy(update={"hidden_paths": [ws / ".skillbank"]}))
    assert (result.status, result.passed) == ("passed", 2), result.output_tail
    assert (ws / ".skillbank" / "trajectories.db").read_text() == SECRET


@pytest.mark.parametrize("backend_setup", ["local+bwrap"], indirect=True)
def test_a_workspace_inside_the_data_dir_still_sees_its_own_files(
    backend_setup: tuple[str, RunnerConfig, list[Path]], tmp_path: Path
) -> None:
    backend, config, _ = backend_setup
    home = _data_dir(tmp_path)
    ws = home / "repo"
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "test_peek.py").write_text(PEEK.format(db=str(home / "trajectories.db")))
    result = run_tests(ws, backend=backend, config=config.model_copy(update={"hidden_paths": [home]}))
    assert (result.status, result.passed) == ("passed", 2), result.output_tail


def test_without_bubblewrap_the_data_dir_path_is_withheld_and_the_limit_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _data_dir(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("SKILLBANK_HOME", str(home))
    monkeypatch.setenv("MY_DATA", str(home / "chroma"))
    config = LocalConfig(use_bwrap=False, env_passthrough=["SKILLBANK_HOME", "MY_DATA"])
    with LocalSandbox(ws, config, hidden=[home]) as sandbox:
        code = "import os; print(sorted(os.environ.items()))"
        result = sandbox.run([sys.executable, "-c", code], cwd=ws, timeout=30, env={"EXTRA": f"{home}/x"})
        warnings = sandbox.warnings
    assert result.exit_code == 0, result.stderr
    assert str(home) not in result.stdout
    assert "SKILLBANK_HOME" not in result.stdout
    assert UNMASKED_WARNING in warnings
