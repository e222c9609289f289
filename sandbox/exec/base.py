"""The `Sandbox` protocol, the result of one command, and the helpers every backend shares.

A sandbox runs one command with a wall-clock timeout and returns an `ExecResult`. A failing, crashing or
timed-out command is data in that result, never an exception. Each backend (`LocalSandbox`, `DockerSandbox`)
makes a *scratch* directory that is visible at the same path inside the sandbox and on the host: the command's
HOME and TMPDIR live there, and so do files the caller wants back (the junit report of a test run).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from sandbox.errors import SandboxConfigError
from sandbox.untrusted import read_small

#: Environment variables a sandboxed command inherits from the host (all others are dropped).
ENV_ALLOWLIST = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM")
#: Names that look like credentials; they are dropped even when allow-listed or passed through.
SECRET_NAME_RE = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE", re.IGNORECASE)
#: Host variables about skillbank itself (its data dir, its Chroma server): never passed to a sandboxed command.
OWN_PREFIX = "SKILLBANK_"
#: The PATH inside a sandbox when the host has none.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class ExecResult(BaseModel):
    """What one command did: its exit code, the tails of its output, and whether it ran out of time."""

    exit_code: int | None
    """The exit status, shell style (128+N when killed by signal N); None when it was killed for the timeout."""
    stdout: str
    """The last bytes of standard output (see the backend's `max_output_bytes`)."""
    stderr: str
    """The last bytes of standard error."""
    stdout_bytes: int = 0
    """How many bytes the command wrote to standard output in all."""
    stderr_bytes: int = 0
    """How many bytes the command wrote to standard error in all."""
    timed_out: bool = False
    duration_s: float
    killed_leftovers: bool = False
    """Processes the command left running were killed when it ended."""
    cancelled: bool = False
    """The command was killed because its `Cancel` was set (the caller no longer wants the result)."""

    @property
    def truncated(self) -> bool:
        """Whether some output was dropped (only the tails are kept)."""
        return self.stdout_bytes > len(self.stdout.encode()) or self.stderr_bytes > len(self.stderr.encode())


class Cancel:
    """Stops a running command from another thread: `set()` makes the backend kill the command and everything it
    started, as at its timeout, and return at once (`ExecResult.cancelled`).

    A client that disconnects or cancels its `run_tests` call must not leave the server waiting for the whole
    suite (up to its timeout), nor the suite running after the server left. The local backend waits on
    `fileno()` beside the command's pipes, so a cancel wakes it without polling."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._closed = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def set(self) -> None:
        with self._lock:  # never a write to a closed fd: its number may belong to another file by now
            if self._event.is_set() or self._closed:
                self._event.set()
                return
            self._event.set()
            with contextlib.suppress(OSError):
                os.write(self._write, b"x")

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def fileno(self) -> int:
        return self._read

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for fd in (self._read, self._write):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def __enter__(self) -> Cancel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@runtime_checkable
class Sandbox(Protocol):
    """Runs commands against one workspace, isolated as far as the backend can."""

    name: str
    """The backend as reported in results: `local`, `local+bwrap` or `docker`."""

    @property
    def warnings(self) -> list[str]:
        """What this backend could not isolate here (for example the network without bubblewrap)."""
        ...

    def scratch(self) -> AbstractContextManager[Path]:
        """A fresh directory, at the same path inside the sandbox and on the host; removed on exit."""
        ...

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
        """Run `command` (an argv list) in `cwd`, killing it and everything it started after `timeout` seconds,
        or as soon as `cancel` is set.

        `env` is added to the scrubbed environment. HOME and TMPDIR point into `scratch` (a fresh one is made
        when none is given). Failures of the command are data in the result.
        """
        ...

    def close(self) -> None:
        """Release what the backend holds (engine connections); warm containers stay for the next run."""
        ...


class TailBuffer:
    """Keeps the last `limit` bytes written to it and counts every byte."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._buf = bytearray()

    def write(self, data: bytes) -> None:
        self.total += len(data)
        if len(data) >= self.limit:
            self._buf = bytearray(data[-self.limit :])
            return
        self._buf += data
        if len(self._buf) > 2 * self.limit:
            del self._buf[: len(self._buf) - self.limit]

    def text(self) -> str:
        data = bytes(self._buf[-self.limit :])
        return data.decode("utf-8", errors="replace")


def scrub_env(
    host: Mapping[str, str],
    extra: Mapping[str, str] | None,
    passthrough: Sequence[str] = (),
    hidden: Sequence[Path] = (),
) -> dict[str, str]:
    """The environment of a sandboxed command: allow-listed host variables, minus anything that looks secret.

    `passthrough` names more host variables to keep; `extra` (set by the caller) is added as given, except
    that names which look like credentials are dropped there too, and that a `PATH` in `extra` is put in front of
    the sandbox's own PATH rather than replacing it. `SKILLBANK_*` host variables and any value that names one of
    the `hidden` paths (the skillbank data dir) are dropped, so a test is not told where the server keeps its state.
    """
    names = set(ENV_ALLOWLIST) | set(passthrough)
    marks = [str(path) for path in hidden]

    def keep(key: str, value: str) -> bool:
        return not SECRET_NAME_RE.search(key) and not any(mark in value for mark in marks)

    env = {
        k: v
        for k, v in host.items()
        if (k in names or k.startswith("LC_")) and not k.startswith(OWN_PREFIX) and keep(k, v)
    }
    env.setdefault("PATH", DEFAULT_PATH)
    for key, value in (extra or {}).items():
        if key == "PATH":
            env["PATH"] = f"{value}:{env['PATH']}"
        elif keep(key, value):
            env[key] = value
    return env


def sandbox_env(scratch: Path, base: dict[str, str]) -> dict[str, str]:
    """Point HOME and TMPDIR into `scratch` (creating them) and turn off colour codes in the output.

    A backend that shows `<scratch>/tmp` as `/tmp` (bubblewrap) sets TMPDIR=/tmp instead: as short as bare pytest's."""
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    env = dict(base)
    env.update(HOME=str(home), TMPDIR=str(tmp), NO_COLOR="1", PY_COLORS="0")
    return env


def scratch_root(configured: Path | None, backend: str) -> Path:
    """The directory a backend makes its scratch dirs in: `configured`, else `<system temp>/skillbank-<uid>-<backend>`.

    Made private (0700) to this user; a root that is a link or belongs to someone else (planted in a shared /tmp)
    raises `SandboxConfigError` instead of being used.
    """
    root = configured or Path(tempfile.gettempdir()) / f"skillbank-{os.getuid()}-{backend}"
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = root.lstat()
    except OSError as exc:
        raise SandboxConfigError(f"cannot create the sandbox scratch dir {root}: {exc.strerror}") from exc
    if root.is_symlink() or not root.is_dir() or info.st_uid != os.getuid():
        raise SandboxConfigError(
            f"the sandbox scratch dir {root} is a link or belongs to another user; remove it or configure another"
        )
    return root


@contextlib.contextmanager
def fresh_scratch(root: Path) -> Iterator[Path]:
    """A new private directory under `root`, removed with everything in it on exit.

    Its `OWNER_FILE` holds this process's `owner_tag`, so that the scratch dirs of a server that died mid-run
    (killed, out of memory) are swept by the next run (`sweep_scratch`) and never those of a live one. The tag is
    not in the dir's name: the tests' paths (TMPDIR, pytest's `tmp_path`) must stay short, since a unix socket
    path has at most 107 bytes.
    """
    sweep_scratch(root)
    path = Path(tempfile.mkdtemp(prefix="run-", dir=root))
    try:
        (path / OWNER_FILE).write_text(owner_tag())
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


#: The file in a scratch dir that names the process that made it (`owner_tag`).
OWNER_FILE = ".owner"
#: `run-<pid>.<pid namespace>-...`: a scratch dir named with its owner tag (before `OWNER_FILE`).
_TAGGED_RUN = re.compile(r"run-(\d+\.\d+)-")
_TAG = re.compile(r"\d+\.\d+")
#: A scratch dir without an owner (`run-XXXXXXXX`) is swept only once it is this old.
UNTAGGED_MAX_AGE_S = 24 * 3600


def owner_tag() -> str:
    """`<pid>.<pid namespace inode>` of this process: names what it leaves on disk, for `owner_gone`."""
    return f"{os.getpid()}.{_pid_namespace()}"


def owner_gone(tag: str) -> bool:
    """Whether the process that made something tagged `tag` has surely exited: only a process of this pid
    namespace can be judged (another namespace's pid means nothing here), and a live pid counts as the owner."""
    pid, _, namespace = tag.partition(".")
    if not pid.isdigit() or namespace != str(_pid_namespace()):
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def sweep_scratch(root: Path) -> int:
    """Remove the scratch dirs under `root` whose server is gone; returns how many."""
    removed = 0
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if not entry.name.startswith("run-") or entry.is_symlink() or not entry.is_dir():
                continue
            match = _TAGGED_RUN.match(entry.name)
            tag = match.group(1) if match else _read_owner(entry / OWNER_FILE)
            # no owner (yet), or one the tests overwrote: only once it is old
            known = tag is not None and _TAG.fullmatch(tag) is not None
            if owner_gone(tag) if tag is not None and known else _age_s(entry) > UNTAGGED_MAX_AGE_S:
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
    return removed


def _read_owner(path: Path) -> str | None:
    """The tag in a scratch dir's owner file; None when there is none yet (the dir is being made) or it is not a
    small regular file (the tests can write the scratch dir: a FIFO there must not block the sweep)."""
    data = read_small(path, 64)
    return (data.decode(errors="replace").strip() or None) if data is not None else None


def _age_s(path: Path) -> float:
    try:
        return time.time() - path.lstat().st_mtime
    except OSError:
        return 0.0


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def shell_exit_code(returncode: int) -> int:
    """A Popen return code in shell style: -N (killed by signal N) becomes 128+N."""
    return 128 - returncode if returncode < 0 else returncode


def describe_exit(exit_code: int | None) -> str | None:
    """A short reason for a signal death (`killed by SIGKILL`), or None for a normal exit."""
    if exit_code is None or exit_code <= 128 or exit_code > 128 + 64:
        return None
    try:
        name = signal.Signals(exit_code - 128).name
    except ValueError:
        return None
    return f"killed by {name}"


def path_is_under(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def minimal_roots(paths: Sequence[Path]) -> list[Path]:
    """The given paths without those that lie inside another one of them, in a stable order."""
    out: list[Path] = []
    for path in sorted(set(paths), key=lambda p: (len(p.parts), str(p))):
        if not path_is_under(path, out):
            out.append(path)
    return out
