"""Fixtures for the sandbox and test-runner tests: real git workspaces, runner configs, a Docker engine check."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandbox.exec.docker import DockerConfig, DockerSandbox
from sandbox.exec.docker_engine import docker_problem
from sandbox.exec.image import DEFAULT_IMAGE
from sandbox.exec.local import LocalConfig, probe_bwrap
from sandbox.testing.config import RunnerConfig

MakeWorkspace = Callable[..., Path]


def git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(ws), *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def make_workspace(tmp_path: Path) -> MakeWorkspace:
    """Write `files` (dedented) into a fresh workspace; with `commit`, make it a git repo with one commit."""

    def make(files: dict[str, str], *, name: str = "ws", commit: bool = True) -> Path:
        ws = tmp_path / name
        ws.mkdir()
        for rel, text in files.items():
            path = ws / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
        if commit:
            git(ws, "init", "-q")
            git(ws, "add", "-A")
            git(ws, "commit", "-q", "-m", "initial")
        return ws

    return make


def bwrap_works() -> bool:
    import shutil

    found = shutil.which("bwrap")
    return found is not None and probe_bwrap(found) is None


def docker_skip_reason() -> str | None:
    return docker_problem(DEFAULT_IMAGE)


@pytest.fixture
def runner_config(tmp_path: Path) -> RunnerConfig:
    """Tests run with this interpreter (it has pytest); docker scratch state under the test's tmp dir."""
    return RunnerConfig(test_python=sys.executable, docker=DockerConfig(state_dir=tmp_path / "docker-state"))


@pytest.fixture
def docker_ready() -> None:
    reason = docker_skip_reason()
    if reason:
        pytest.skip(f"no Docker sandbox here: {reason}")


@pytest.fixture
def discard_containers(runner_config: RunnerConfig) -> Iterator[list[Path]]:
    """Workspaces appended to the yielded list get their warm container removed after the test."""
    workspaces: list[Path] = []
    yield workspaces
    if workspaces and docker_skip_reason() is not None:
        return
    for ws in workspaces:
        with DockerSandbox(ws, runner_config.docker_image, runner_config.docker) as sandbox:
            sandbox.discard()


@pytest.fixture
def backend_setup(
    request: pytest.FixtureRequest, runner_config: RunnerConfig, discard_containers: list[Path]
) -> tuple[str, RunnerConfig, list[Path]]:
    """(backend argument for run_tests, config) for the parametrised backend, skipping where it cannot run."""
    kind: str = request.param
    if kind == "local+bwrap":
        if not bwrap_works():
            pytest.skip("bubblewrap is not installed or cannot make namespaces here")
        return "local", runner_config, discard_containers
    if kind == "local":
        config = runner_config.model_copy(update={"local": LocalConfig(use_bwrap=False)})
        return "local", config, discard_containers
    reason = docker_skip_reason()
    if reason:
        pytest.skip(f"no Docker sandbox here: {reason}")
    return "docker", runner_config, discard_containers


def _live_processes_mentioning(marker: str) -> list[str]:
    found: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state = stat[stat.rfind(")") + 2 :].split()[0]
        if marker in cmdline and state != "Z":
            found.append(cmdline)
    return found


@pytest.fixture
def live_processes() -> Callable[[str], list[str]]:
    """Command lines of live (non-zombie) host processes whose command line contains a marker."""
    return _live_processes_mentioning
