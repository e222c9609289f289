"""Bad `run_tests` arguments are refused with a fix-it message, before anything runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox.errors import (
    BackendUnavailable,
    InterpreterNotFound,
    RequestRefused,
    SandboxUnavailable,
    WorkspaceUnavailable,
)
from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_tests

SUITE = {"tests/test_ok.py": "def test_ok():\n    pass\n"}


@pytest.fixture
def ws(make_workspace) -> Path:
    return make_workspace(SUITE)


@pytest.mark.parametrize(("timeout_s", "message"), [(0, "out of range"), (3601, "out of range"), (1.5, "whole")])
def test_timeout_out_of_range_is_refused(ws: Path, runner_config: RunnerConfig, timeout_s: object, message: str):
    with pytest.raises(RequestRefused, match=message):
        run_tests(ws, timeout_s=timeout_s, config=runner_config)  # type: ignore[arg-type]


def test_unknown_backend_is_refused_naming_the_choices(ws: Path, runner_config: RunnerConfig) -> None:
    with pytest.raises(RequestRefused, match="auto, local, docker"):
        run_tests(ws, backend="podman", config=runner_config)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("-k test_ok", "starts with '-'"),
        ("--collect-only", "starts with '-'"),
        ("../outside.py", "outside the workspace"),
        ("/etc/passwd", "outside the workspace"),
        ("tests/test_missing.py::test_x", "does not exist"),
        ("tests/test_ok.py\n--pdb", "newline"),
        ("", "non-empty"),
    ],
)
def test_bad_test_entries_are_refused(ws: Path, runner_config: RunnerConfig, entry: str, message: str) -> None:
    with pytest.raises(RequestRefused, match=message):
        run_tests(ws, tests=[entry], config=runner_config)


def test_symlink_that_leaves_the_workspace_is_refused(ws: Path, runner_config: RunnerConfig, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "test_evil.py").write_text("def test_evil():\n    pass\n")
    os.symlink(outside, ws / "link")
    with pytest.raises(RequestRefused, match="outside the workspace"):
        run_tests(ws, tests=["link/test_evil.py"], config=runner_config)


def test_command_starting_with_a_dash_is_refused(ws: Path, runner_config: RunnerConfig) -> None:
    with pytest.raises(RequestRefused, match="starts with '-'"):
        run_tests(ws, command="--version", config=runner_config)


def test_blank_command_is_refused(ws: Path, runner_config: RunnerConfig) -> None:
    with pytest.raises(RequestRefused, match="non-empty"):
        run_tests(ws, command="   ", config=runner_config)


def test_missing_workspace_is_an_operator_problem(tmp_path: Path, runner_config: RunnerConfig) -> None:
    with pytest.raises(WorkspaceUnavailable, match="not a directory"):
        run_tests(tmp_path / "nope", config=runner_config)


def test_missing_configured_interpreter_says_how_to_fix_it(ws: Path, tmp_path: Path) -> None:
    config = RunnerConfig(test_python=str(tmp_path / "no-such-python"))
    with pytest.raises(InterpreterNotFound, match="SKILLBANK_TEST_PYTHON") as caught:
        run_tests(ws, config=config)
    assert isinstance(caught.value, SandboxUnavailable)
    assert caught.value.workaround is not None
    assert "command" in caught.value.workaround


def test_docker_backend_without_an_engine_says_how_to_fix_it(ws: Path, runner_config: RunnerConfig) -> None:
    config = runner_config.model_copy(
        update={"docker": runner_config.docker.model_copy(update={"base_url": "unix:///nonexistent/docker.sock"})}
    )
    with pytest.raises(BackendUnavailable, match="start dockerd or set DOCKER_HOST") as caught:
        run_tests(ws, backend="docker", config=config)
    assert isinstance(caught.value, SandboxUnavailable)
    assert not isinstance(caught.value, RequestRefused)
    assert caught.value.workaround == "use backend='local'"


def test_refused_request_changes_nothing_in_the_workspace(ws: Path, runner_config: RunnerConfig) -> None:
    before = sorted(p.relative_to(ws) for p in ws.rglob("*"))
    with pytest.raises(RequestRefused):
        run_tests(ws, tests=["-x"], config=runner_config)
    assert sorted(p.relative_to(ws) for p in ws.rglob("*")) == before


def test_valid_entries_are_normalised_relative_to_the_workspace(ws: Path, runner_config: RunnerConfig) -> None:
    absolute = str(ws / "tests" / "test_ok.py") + "::test_ok"
    result = run_tests(ws, tests=[absolute], backend="local", config=runner_config)
    assert result.status == "passed"
    assert result.command.endswith(" tests/test_ok.py::test_ok")
