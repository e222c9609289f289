"""Talking to the Docker engine: opening a client, asking whether the sandbox can run, and tidying up.

The docker SDK is imported lazily, inside these functions, so that importing `sandbox` never loads it.
All calls block; async callers run them in a thread.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from sandbox.errors import BackendUnavailable

if TYPE_CHECKING:
    from docker import DockerClient

#: Label on every warm container; its value is the workspace it serves.
CONTAINER_LABEL = "skillbank.sandbox.workspace"
#: Where the docker CLI looks when DOCKER_HOST is unset.
DEFAULT_SOCKET = "unix:///var/run/docker.sock"
#: Label holding the host directory that is mounted into the container for scratch dirs.
STATE_LABEL = "skillbank.sandbox.state"


class WarmContainer(BaseModel):
    """A sandbox container kept for a workspace."""

    name: str
    workspace: str
    status: str


def make_client(base_url: str | None = None, timeout: int = 60) -> DockerClient:
    """A client for `base_url`, or for DOCKER_HOST / the default socket like the docker CLI.

    Raises `docker.errors.DockerException` when no engine answers.
    """
    import docker

    url = base_url or os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET
    if url.startswith("unix://"):
        # Checked here first: the SDK leaks its socket when a unix socket does not answer.
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(5)
                probe.connect(url.removeprefix("unix://"))
        except OSError as exc:
            raise docker.errors.DockerException(f"cannot connect to {url}: {exc}") from exc
    if base_url:
        return docker.DockerClient(base_url=base_url, timeout=timeout)
    return docker.from_env(timeout=timeout)


@contextmanager
def open_client(base_url: str | None = None, timeout: int = 60) -> Iterator[DockerClient]:
    """`make_client`, closed on exit."""
    client = make_client(base_url, timeout)
    try:
        yield client
    finally:
        client.close()


@contextmanager
def engine_errors() -> Iterator[None]:
    """Errors of the Docker engine (or its SDK) as `BackendUnavailable`, with the engine's message."""
    import docker

    try:
        yield
    except docker.errors.DockerException as exc:
        raise BackendUnavailable(f"the Docker engine refused: {_short(exc)}") from exc


def docker_problem(image: str | None, base_url: str | None = None) -> str | None:
    """None when an engine answers (and holds `image`, unless None); otherwise what is missing and how to fix it."""
    try:
        import docker
        from requests.exceptions import RequestException
    except ImportError:
        return "the docker SDK is not installed: pip install docker==7.2.0"
    where = base_url or "DOCKER_HOST or the default socket"
    try:
        with open_client(base_url, timeout=10) as client:
            client.ping()
            if image is not None:
                client.images.get(image)
    except docker.errors.ImageNotFound:
        return f"the sandbox image {image!r} is not built: run `skillbank sandbox build-image`"
    except (docker.errors.DockerException, RequestException, OSError) as exc:
        return f"no Docker engine answers at {where} ({_short(exc)}): start dockerd or set DOCKER_HOST"
    return None


def list_containers(client: DockerClient) -> list[WarmContainer]:
    """The warm sandbox containers on this engine."""
    found = client.containers.list(all=True, filters={"label": CONTAINER_LABEL})
    return [WarmContainer(name=c.name, workspace=c.labels.get(CONTAINER_LABEL, ""), status=c.status) for c in found]


def stop_containers(client: DockerClient, workspace: Path | None = None) -> int:
    """Remove the warm sandbox containers (of `workspace` only, if given) and their scratch state; returns how many."""
    import docker

    label = CONTAINER_LABEL if workspace is None else f"{CONTAINER_LABEL}={workspace}"
    removed = 0
    for container in client.containers.list(all=True, filters={"label": label}):
        state = container.labels.get(STATE_LABEL)
        try:
            container.remove(force=True)
            removed += 1
        except docker.errors.NotFound:
            continue
        if state:
            shutil.rmtree(Path(state), ignore_errors=True)
    return removed


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]
