"""`DockerSandbox`: runs commands in a warm container per workspace, through the docker SDK.

The container has no network, memory/CPU/pids limits, a read-only root, all capabilities dropped, and runs as the
host user; the workspace is bind-mounted read-write at its own path, the host's interpreter dirs read-only (see
`sandbox.exec.image`). Each command runs under `timeout -s INT -k <interrupt_grace_s>` inside the container (at its
timeout it is interrupted as by Ctrl-C, so pytest writes its report of the tests that finished, and killed if it has
not ended soon after), and the host kills the container as well if it overruns. After a timeout, or when a command
leaves processes behind, the container is removed and the next run starts a fresh one; otherwise it stays warm and
is reused. An idle container exits by itself after `idle_minutes`. The `hidden` paths (the skillbank data dir) are
never mounted; where one lies inside a mount (a data dir inside the workspace) an empty read-only tmpfs covers it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from sandbox.errors import BackendUnavailable, SandboxConfigError
from sandbox.exec.base import (
    DEFAULT_PATH,
    Cancel,
    ExecResult,
    TailBuffer,
    fresh_scratch,
    minimal_roots,
    path_is_under,
    sandbox_env,
    scratch_root,
    scrub_env,
)
from sandbox.exec.docker_engine import CONTAINER_LABEL, STATE_LABEL, make_client
from sandbox.exec.image import DEFAULT_IMAGE, system_mounts
from sandbox.exec.view import git_dirs_inside, needs_placeholder, remove_placeholder

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

#: PID 1 of a warm container: stays up while runs are in progress or the state dir was touched recently.
KEEPER = 'while [ -n "$(ls -A "$1")" ] || [ -n "$(find "$1" -maxdepth 0 -mmin "-$2")" ]; do sleep 20 & wait $!; done'
_SPEC_LABEL = "skillbank.sandbox.spec"


class DockerConfig(BaseModel):
    """Limits of the Docker backend."""

    base_url: str | None = None
    """Engine address; None uses DOCKER_HOST or the default socket, like the docker CLI."""
    memory_mb: int = Field(default=2048, ge=64)
    """Memory limit of the container, MiB (no swap): a 10 GB allocation is killed by the engine."""
    cpus: float = Field(default=2.0, gt=0)
    pids_limit: int = Field(default=512, ge=8)
    """Processes allowed at once: a fork bomb stops here."""
    tmpfs_mb: int = Field(default=256, ge=1)
    """Size of the in-memory /tmp (HOME and TMPDIR live in the host-backed scratch dir instead)."""
    max_file_mb: int = Field(default=1024, ge=1)
    """Largest file a process may write, MiB."""
    max_open_files: int = Field(default=4096, ge=16)
    max_output_bytes: int = Field(default=1 << 20, ge=1024)
    """Tail kept of stdout and of stderr, each."""
    idle_minutes: int = Field(default=30, ge=1)
    """A warm container with no run for this long exits."""
    kill_grace_s: float = Field(default=5.0, gt=0)
    """The host kills the container this long after the in-container kill should have fired."""
    interrupt_grace_s: float = Field(default=3.0, ge=0)
    """At the timeout the command gets SIGINT, and SIGKILL this long after (0: SIGKILL at once)."""
    state_dir: Path | None = None
    """Host dir for the containers' scratch dirs; default `<tmp>/skillbank-<uid>-docker`."""


class DockerSandbox:
    """Runs commands in the warm container of one workspace (see the module docstring)."""

    name = "docker"

    def __init__(
        self,
        workspace: Path,
        image: str = DEFAULT_IMAGE,
        config: DockerConfig | None = None,
        ro_paths: Sequence[Path] = (),
        hidden: Sequence[Path] = (),
    ) -> None:
        self.workspace = workspace.resolve()
        self.image = image
        self.config = config or DockerConfig()
        self.ro_paths = [Path(p) for p in ro_paths]
        self.hidden = minimal_roots([Path(p).resolve() for p in hidden])
        digest = hashlib.sha256(f"{self.workspace}\0{image}".encode()).hexdigest()[:16]
        self.container_name = f"skillbank-{digest}"
        self.state = scratch_root(self.config.state_dir, "docker") / self.container_name
        self._client: DockerClient | None = None
        self._container: Container | None = None

    @property
    def warnings(self) -> list[str]:
        return []

    @property
    def client(self) -> DockerClient:
        if self._client is None:
            import docker

            try:
                self._client = make_client(self.config.base_url)
            except docker.errors.DockerException as exc:
                raise BackendUnavailable(f"no Docker engine answers ({exc}): start dockerd or set DOCKER_HOST") from exc
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        self._container = self.container()
        with fresh_scratch(self.state) as path:
            yield path

    def container(self) -> Container:
        """The running warm container for this workspace, created (or replaced) when needed."""
        import docker

        spec = self._spec()
        spec_hash = hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:16]
        for _ in range(3):
            try:
                found = self.client.containers.get(self.container_name)
            except docker.errors.NotFound:
                found = None
            if found is not None and found.status == "running" and found.labels.get(_SPEC_LABEL) == spec_hash:
                return found
            if found is not None:
                self.discard()
            self.state.mkdir(parents=True, exist_ok=True, mode=0o700)
            git = self.workspace / ".git"
            if needs_placeholder(git) and not os.path.lexists(git):  # the engine makes this mount point: ours
                self._placeholder_marker.touch()
            try:
                spec["labels"][_SPEC_LABEL] = spec_hash
                return self.client.containers.run(**spec)
            except docker.errors.ImageNotFound as exc:
                raise BackendUnavailable(
                    f"the sandbox image {self.image!r} is not built: run `skillbank sandbox build-image`"
                ) from exc
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: another run created it at the same moment
                    raise BackendUnavailable(f"the Docker engine refused the sandbox container: {exc}") from exc
        raise BackendUnavailable(f"could not start the sandbox container {self.container_name}")

    def discard(self) -> None:
        """Remove the warm container (killing whatever runs in it); the next run starts a fresh one."""
        import docker

        self._container = None
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            self.client.api.remove_container(self.container_name, force=True)
        if self._placeholder_marker.exists():
            with contextlib.suppress(SandboxConfigError):
                remove_placeholder(self.workspace, scratch_root(None, "local"))
            self._placeholder_marker.unlink(missing_ok=True)

    @property
    def _placeholder_marker(self) -> Path:
        """Beside the state dir, not in it: the keeper stays up while the state dir is not empty."""
        return self.state.parent / f"{self.container_name}.git-placeholder"

    def _spec(self) -> dict[str, Any]:
        import docker

        cfg = self.config
        volumes = {str(p): {"bind": str(p), "mode": "ro"} for p in self._ro_mounts()}
        volumes[str(self.workspace)] = {"bind": str(self.workspace), "mode": "rw"}
        volumes[str(self.state)] = {"bind": str(self.state), "mode": "rw"}
        tmpfs = {"/tmp": f"rw,nosuid,nodev,size={cfg.tmpfs_mb}m,mode=1777"}
        # Host git reads this repo later (the syntax reward): the tests must not plant a filter there, nor create
        # or redirect `.git`. Whatever it is it is read-only; where there is none an empty read-only tmpfs is.
        git = self.workspace / ".git"
        if needs_placeholder(git):
            tmpfs[str(git)] = "ro,nosuid,nodev,size=4k,mode=0555"
        elif os.path.lexists(git) and not git.is_symlink():
            volumes[str(git)] = {"bind": str(git), "mode": "ro"}
        for path in git_dirs_inside(self.workspace):
            volumes[str(path)] = {"bind": str(path), "mode": "ro"}
        for path in self.hidden:  # inside a mount (the workspace, say): covered by an empty read-only tmpfs
            if path.is_dir() and path_is_under(path, [Path(v) for v in volumes]):
                tmpfs[str(path)] = "ro,nosuid,nodev,size=4k,mode=0555"
        mib = 1024 * 1024
        ulimits = [
            docker.types.Ulimit(name="fsize", soft=cfg.max_file_mb * mib, hard=cfg.max_file_mb * mib),
            docker.types.Ulimit(name="nofile", soft=cfg.max_open_files, hard=cfg.max_open_files),
            docker.types.Ulimit(name="core", soft=0, hard=0),
        ]
        return {
            "image": self.image,
            "command": ["/bin/sh", "-c", KEEPER, "keeper", str(self.state), str(cfg.idle_minutes)],
            "name": self.container_name,
            "detach": True,
            "labels": {CONTAINER_LABEL: str(self.workspace), STATE_LABEL: str(self.state)},
            "network_mode": "none",
            "mem_limit": f"{cfg.memory_mb}m",
            "memswap_limit": f"{cfg.memory_mb}m",
            "nano_cpus": int(cfg.cpus * 1e9),
            "pids_limit": cfg.pids_limit,
            "read_only": True,
            "tmpfs": tmpfs,
            "volumes": volumes,
            "user": f"{os.getuid()}:{os.getgid()}",
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "ulimits": ulimits,
            "working_dir": str(self.workspace),
            "hostname": "sandbox",
            "environment": {"PATH": DEFAULT_PATH},
        }

    def _ro_mounts(self) -> list[Path]:
        """The system dirs and the interpreter's dirs, read-only; none of them inside a hidden path."""
        system = system_mounts()
        extra = [p for p in self.ro_paths if p.exists() and not path_is_under(p, [*system, self.workspace])]
        return [p for p in [*system, *minimal_roots(extra)] if not path_is_under(p.resolve(), self.hidden)]

    def run(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        timeout: float,
        env: Mapping[str, str] | None = None,
        scratch: Path | None = None,
        cancel: Cancel | None = None,
    ) -> ExecResult:
        if scratch is None:
            with self.scratch() as fresh:
                return self.run(command, cwd=cwd, timeout=timeout, env=env, scratch=fresh, cancel=cancel)
        import docker

        grace = self.config.interrupt_grace_s
        stop = ["-s", "INT", "-k", f"{grace:g}"] if grace else ["-s", "KILL"]
        argv = ["timeout", *stop, f"{timeout:g}", *command]
        environment = [f"{k}={v}" for k, v in self.exec_env(env, scratch).items()]
        for attempt in range(2):
            container = self._container or self.container()
            try:
                exec_id = self.client.api.exec_create(container.id, argv, workdir=str(cwd), environment=environment)
                break
            except docker.errors.APIError as exc:  # the container stopped (idle exit, engine restart): once more
                self._container = None
                if attempt:
                    raise BackendUnavailable(f"the sandbox container cannot run commands: {exc}") from exc
        return self._follow(exec_id["Id"], timeout, cancel)

    def exec_env(self, env: Mapping[str, str] | None, scratch: Path) -> dict[str, str]:
        """The environment of a command in the container: the scrubbed host variables with the container's own
        PATH, `env`'s PATH in front of it (the test interpreter's dir is among the read-only mounts), HOME and
        TMPDIR in `scratch`."""
        host = {**os.environ, "PATH": DEFAULT_PATH}
        return sandbox_env(scratch, scrub_env(host, env, hidden=self.hidden))

    def _follow(self, exec_id: str, timeout: float, cancel: Cancel | None = None) -> ExecResult:
        import docker

        out, err = TailBuffer(self.config.max_output_bytes), TailBuffer(self.config.max_output_bytes)
        done = threading.Event()
        start = time.monotonic()
        reader = threading.Thread(target=self._read, args=(exec_id, out, err, done), daemon=True)
        reader.start()
        overrun = timeout + self.config.interrupt_grace_s + self.config.kill_grace_s
        host_killed = not _wait_done(done, start + overrun, cancel)
        cancelled = host_killed and cancel is not None and cancel.is_set()
        if host_killed:
            self.discard()  # the container and every process in it: the command cannot outlive the call
            done.wait(self.config.kill_grace_s)
        duration = time.monotonic() - start
        exit_code: int | None = None
        with contextlib.suppress(docker.errors.APIError):
            exit_code = self.client.api.exec_inspect(exec_id).get("ExitCode")
        # `timeout` exits 124 when it interrupted the command, 137 when it had to kill it
        timed_out = not cancelled and (host_killed or (exit_code in (124, 137) and duration >= timeout))
        leftovers = False
        if timed_out or cancelled:
            self.discard()
        else:
            leftovers = self._discard_if_leftovers()
        return ExecResult(
            cancelled=cancelled,
            exit_code=None if timed_out or cancelled else exit_code,
            stdout=out.text(),
            stderr=err.text(),
            stdout_bytes=out.total,
            stderr_bytes=err.total,
            timed_out=timed_out,
            duration_s=round(duration, 3),
            killed_leftovers=leftovers,
        )

    def _read(self, exec_id: str, out: TailBuffer, err: TailBuffer, done: threading.Event) -> None:
        import docker
        from docker.utils.socket import STDERR, frames_iter
        from requests.exceptions import RequestException

        sock = None
        try:
            # The raw socket, not `stream=True`: the SDK never closes a streamed exec's connection.
            sock = self.client.api.exec_start(exec_id, socket=True)
            for stream_id, chunk in frames_iter(sock, tty=False):
                (err if stream_id == STDERR else out).write(chunk)
        except (docker.errors.DockerException, RequestException, OSError, ValueError):
            pass  # the container was killed under the stream; the result says so
        finally:
            try:
                if sock is not None:
                    _close_hijacked(sock)
            finally:
                done.set()

    def _discard_if_leftovers(self) -> bool:
        """Remove the container when processes of finished runs are still alive in it; True when it was."""
        import docker

        try:
            container = self.client.containers.get(self.container_name)
            keeper = str(container.attrs["State"]["Pid"])
            rows = self.client.api.top(container.id, ps_args="-eo pid,pgid,comm").get("Processes") or []
        except (docker.errors.APIError, KeyError):
            return False
        others = [row for row in rows if row[0] != keeper and row[1] != keeper]
        if not others:
            return False
        running: set[str] = set()
        for exec_id in container.attrs.get("ExecIDs") or []:
            with contextlib.suppress(docker.errors.APIError):
                info = self.client.api.exec_inspect(exec_id)
                if info.get("Running"):
                    running.add(str(info.get("Pid")))
        if all(row[1] in running for row in others):
            return False
        self.discard()
        return True


def _wait_done(done: threading.Event, deadline: float, cancel: Cancel | None) -> bool:
    """Wait for the exec's stream to end until `deadline` (monotonic) or `cancel`; True when it ended."""
    if cancel is None:
        return done.wait(max(deadline - time.monotonic(), 0))
    while not cancel.is_set():
        if done.wait(min(max(deadline - time.monotonic(), 0), 0.05)):
            return True
        if time.monotonic() >= deadline:
            return False
    return done.is_set()


def _close_hijacked(sock: Any) -> None:
    """Close an exec's hijacked connection: the socket file, the socket under it, and the HTTP response."""
    for part in (getattr(sock, "_response", None), sock, getattr(sock, "_sock", None)):
        if part is not None:
            with contextlib.suppress(OSError, ValueError):
                part.close()
