"""Choosing the sandbox backend: `docker` when an engine answers and the image is built, else `local`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sandbox.errors import BackendUnavailable
from sandbox.exec.base import Sandbox
from sandbox.exec.docker import DockerConfig, DockerSandbox
from sandbox.exec.docker_engine import docker_problem
from sandbox.exec.image import DEFAULT_IMAGE
from sandbox.exec.local import LocalConfig, LocalSandbox


def open_sandbox(
    backend: str,
    workspace: Path,
    *,
    image: str = DEFAULT_IMAGE,
    local: LocalConfig | None = None,
    docker: DockerConfig | None = None,
    ro_paths: Sequence[Path] = (),
    hidden: Sequence[Path] = (),
) -> Sandbox:
    """The sandbox for `backend` (`auto`, `local` or `docker`); close it when done.

    `docker` raises `BackendUnavailable`, saying how to fix it, when no engine answers or the image is missing;
    `auto` then falls back to `local` (with bubblewrap when it works here). `ro_paths` are host dirs the command
    needs read-only (its interpreter); `hidden` are host paths it must never see (the skillbank data dir).
    """
    docker_config = docker or DockerConfig()
    if backend in ("docker", "auto"):
        problem = docker_problem(image, docker_config.base_url)
        if problem is None:
            return DockerSandbox(workspace, image, docker_config, ro_paths, hidden)
        if backend == "docker":
            raise BackendUnavailable(f"the docker backend cannot run: {problem}; or use backend='local'")
    return LocalSandbox(workspace, local, ro_paths, hidden)
