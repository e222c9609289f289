"""Choosing the sandbox backend: `docker` when an engine answers and the image is built, else `local`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sandbox.base import Sandbox
from sandbox.config import RunnerConfig
from sandbox.engine import docker_problem
from sandbox.errors import BackendUnavailable
from sandbox.local import LocalSandbox


def open_sandbox(backend: str, workspace: Path, config: RunnerConfig, ro_paths: Sequence[Path] = ()) -> Sandbox:
    """The sandbox for `backend` (`auto`, `local` or `docker`); close it when done.

    `docker` raises `BackendUnavailable`, saying how to fix it, when no engine answers or the image is missing;
    `auto` then falls back to `local` (with bubblewrap when it works here).
    """
    if backend in ("docker", "auto"):
        problem = docker_problem(config.docker_image, config.docker.base_url)
        if problem is None:
            from sandbox.docker import DockerSandbox

            return DockerSandbox(workspace, config.docker_image, config.docker, ro_paths)
        if backend == "docker":
            raise BackendUnavailable(f"the docker backend cannot run: {problem}; or use backend='local'")
    return LocalSandbox(workspace, config.local, ro_paths)
