"""`skillbank sandbox ...`: build the Docker sandbox image, check the isolation here, stop warm containers."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from mcp_server.cli.common import clean_errors, load_settings
from sandbox.exec.cgroup import PidsCgroup
from sandbox.exec.docker_engine import docker_problem, engine_errors, list_containers, open_client, stop_containers
from sandbox.exec.image import build_image
from sandbox.exec.local import probe_bwrap

app = typer.Typer(
    name="sandbox",
    help="The sandbox of run_tests: build the Docker image, check the isolation available here.",
    no_args_is_help=True,
)


DockerHost = Annotated[
    str | None, typer.Option("--docker-host", help="Docker engine address (default: DOCKER_HOST or the socket).")
]


@app.command("build-image")
def build_image_command(
    tag: Annotated[str | None, typer.Option(help="Image tag (default: SKILLBANK_DOCKER_IMAGE).")] = None,
    docker_host: DockerHost = None,
) -> None:
    """Build the sandbox image on the local Docker engine (offline, in about a second)."""
    tag = tag or load_settings().docker_image
    problem = docker_problem(None, docker_host)
    if problem:
        typer.echo(f"skillbank: error: {problem}", err=True)
        raise typer.Exit(1)
    with clean_errors(), engine_errors(), open_client(docker_host) as client:
        info = build_image(client, tag)
    typer.echo(f"built {info.tag} ({info.image_id[:19]}, {info.size_bytes} bytes)")
    typer.echo("tests run with the host's interpreter, mounted read-only; the workspace is mounted read-write")


@app.command("status")
def status_command(docker_host: DockerHost = None) -> None:
    """Say which backend `run_tests` would use here and what each one isolates."""
    image = load_settings().docker_image
    problem = docker_problem(image, docker_host)
    typer.echo(f"docker:      {'ready (' + image + ')' if problem is None else 'unavailable: ' + problem}")
    bwrap = shutil.which("bwrap")
    bwrap_problem = probe_bwrap(bwrap) if bwrap else "not installed (apt-get install bubblewrap)"
    typer.echo(f"bubblewrap: {'ready' if bwrap_problem is None else bwrap_problem}")
    group = PidsCgroup.create(8)
    if group is not None:
        group.remove()
    typer.echo(f"pids cgroup: {'ready' if group else 'unavailable (a local fork bomb is stopped by the timeout only)'}")
    backend = "docker" if problem is None else ("local+bwrap" if bwrap_problem is None else "local")
    typer.echo(f"backend=auto uses: {backend}")
    if problem is None:
        with open_client(docker_host) as client:
            for warm in list_containers(client):
                typer.echo(f"warm container {warm.name} ({warm.status}) for {warm.workspace}")


@app.command("stop")
def stop_command(
    workspace: Annotated[Path | None, typer.Option(help="Only the container of this workspace.")] = None,
    docker_host: DockerHost = None,
) -> None:
    """Remove the warm sandbox containers (they also exit by themselves when idle)."""
    problem = docker_problem(None, docker_host)
    if problem:
        typer.echo(f"skillbank: error: {problem}", err=True)
        raise typer.Exit(1)
    with clean_errors(), engine_errors(), open_client(docker_host) as client:
        removed = stop_containers(client, workspace.resolve() if workspace else None)
    typer.echo(f"removed {removed} warm container(s)")
