"""`command` mode sees the default command's interpreter first on PATH: `pytest`, `python -m pytest` just work."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sandbox.exec.base import DEFAULT_PATH, path_is_under
from sandbox.exec.docker import DockerConfig, DockerSandbox
from sandbox.exec.interpreter import find_interpreter
from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_env, run_tests

Setup = tuple[str, RunnerConfig, list[Path]]
OK = {"tests/test_ok.py": "def test_ok():\n    pass\n"}
#: A host PATH without this interpreter's dir, the pyenv shims or a `python` (the repro host has only `python3`).
BARE_PATH = "/usr/bin:/bin"


@pytest.mark.parametrize("backend_setup", ["local+bwrap", "local", "docker"], indirect=True)
@pytest.mark.parametrize("command", ["pytest -q", "python -m pytest -q", "python3 -m pytest -q"])
def test_pytest_in_a_command_is_the_configured_test_python(
    make_workspace, backend_setup: Setup, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend, config, containers = backend_setup
    ws = make_workspace(OK)
    containers.append(ws)
    monkeypatch.setenv("PATH", BARE_PATH)
    result = run_tests(ws, command=command, backend=backend, config=config)
    assert (result.status, result.exit_code) == ("passed", 0), result.output_tail
    assert "1 passed" in result.output_tail


@pytest.mark.parametrize("backend_setup", ["local+bwrap", "local", "docker"], indirect=True)
def test_python_in_a_command_is_the_interpreter_of_the_default_command(
    make_workspace, backend_setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend, config, containers = backend_setup
    ws = make_workspace(OK)
    containers.append(ws)
    monkeypatch.setenv("PATH", BARE_PATH)
    show = "python -c 'import sys; print(sys.executable)'; command -v pytest"
    result = run_tests(ws, command=show, backend=backend, config=config)
    assert result.status == "passed", result.output_tail
    interpreter = find_interpreter(ws, config.test_python)
    assert result.output_tail.split() == [str(interpreter.path), str(interpreter.path.parent / "pytest")]


def test_workspace_venv_stays_first_and_the_test_python_comes_next(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(OK)
    (ws / ".venv" / "bin").mkdir(parents=True)  # a venv without a python: the configured one runs the tests
    result = run_tests(ws, command='printf "%s" "$PATH"', backend="local", config=runner_config)
    interpreter = find_interpreter(ws, runner_config.test_python)
    assert interpreter.source == "configured"
    assert result.output_tail.startswith(f"{ws / '.venv' / 'bin'}:{interpreter.path.parent}:")


def test_default_command_env_is_only_the_workspace_venv(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(OK)
    assert run_env(ws) == {}
    (ws / ".venv" / "bin").mkdir(parents=True)
    assert run_env(ws) == {"PATH": str(ws / ".venv" / "bin"), "VIRTUAL_ENV": str(ws / ".venv")}


def test_docker_command_gets_the_test_python_first_on_path_and_mounted(make_workspace, tmp_path: Path) -> None:
    """No engine needed: the environment and mounts a docker exec would get."""
    ws = make_workspace(OK)
    interpreter = find_interpreter(ws, sys.executable)
    sandbox = DockerSandbox(ws, config=DockerConfig(state_dir=tmp_path / "state"), ro_paths=interpreter.roots)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = sandbox.exec_env(run_env(ws, interpreter), scratch)
    assert env["PATH"] == f"{interpreter.path.parent}:{DEFAULT_PATH}"
    visible = [*sandbox._ro_mounts(), sandbox.workspace]
    assert path_is_under(interpreter.path.parent, visible)
    assert path_is_under(interpreter.path.resolve(), visible)
