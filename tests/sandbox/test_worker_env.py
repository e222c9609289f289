"""The server's worker processes (syntax, redaction, embedder) hold none of its secrets where a test under the plain
local backend (same uid, no CAP_SYS_PTRACE) could look: their environment is scrubbed, and they are undumpable, so
such a process cannot open their /proc/PID/environ (nor their memory or fds) at all."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_server.redact_worker import RedactWorker
from sandbox.syntax_worker import SyntaxWorker
from sandbox.worker_env import worker_env
from skills_store.embedders.worker import ENV_DEFAULTS, ENV_NAMES, ENV_PREFIXES, WorkerEmbedder
from skills_store.redact import Redactor

SECRETS = {
    "SKILLBANK_TOKEN": "sb-fake-token-1f2e",
    "OPENAI_API_KEY": "sk-fake-openai-3d4c",
    "ANTHROPIC_API_KEY": "sk-ant-fake-5b6a",
    "HF_TOKEN": "hf_fake_7980",  # under a prefix the embedder keeps
    "PYTHON_KEYRING_PASSWORD": "fake-pass-a1b2",  # likewise
}
#: How a root test gets a process "of the same uid, without CAP_SYS_PTRACE": both sides run as nobody, keeping only
#: CAP_DAC_READ_SEARCH so that an interpreter under a private dir (pyenv in /root) can still be run.
AS_NOBODY = (
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    "--inh-caps=+dac_read_search",
    "--ambient-caps=+dac_read_search",
)
_READ_ENVIRON = """import sys
try:
    open(f"/proc/{sys.argv[1]}/environ", "rb").read()
except PermissionError:
    print("denied")
else:
    print("read")
"""
_CONTROL = """import ctypes, sys
if sys.argv[1] == "undumpable":
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
print("up", flush=True)
sys.stdin.read()
"""


def start_syntax() -> tuple[int | None, Callable[[], None]]:
    worker = SyntaxWorker()
    assert worker.wait_ready(20)
    return worker.pid, worker.close


def start_redact() -> tuple[int | None, Callable[[], None]]:
    worker = RedactWorker(Redactor())
    assert worker.wait_ready(20)
    return worker.pid, worker.close


def start_embedder() -> tuple[int | None, Callable[[], None]]:
    worker = WorkerEmbedder("hash")  # a spec whose name only the worker knows: built once the worker is ready
    return worker.pid, worker.close


@pytest.fixture(params=[start_syntax, start_redact, start_embedder], ids=["syntax", "redact", "embedder"])
def start_worker(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], int]]:
    """Starts the worker (with the server's environment holding `SECRETS`) and gives its pid; closed after."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    closers: list[Callable[[], None]] = []

    def start() -> int:
        pid, close = request.param()
        closers.append(close)
        assert pid is not None
        return pid

    yield start
    for close in closers:
        close()


@pytest.fixture
def same_uid_reader(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], str]:
    """`read(pid)`: "read" or "denied", as a process of the workers' uid without CAP_SYS_PTRACE sees the worker's
    /proc/PID/environ. As root, the workers started during the test (and the reader) run as nobody."""
    popen = subprocess.Popen
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root, and no setpriv to run the workers and the reader as another uid")
        prefix = AS_NOBODY

        class AsNobody(popen):  # type: ignore[valid-type, misc]
            def __init__(self, args: list[str], *rest: Any, **kwargs: Any) -> None:
                super().__init__([*prefix, *args], *rest, **kwargs)

        monkeypatch.setattr(subprocess, "Popen", AsNobody)

    def read(pid: int) -> str:
        argv = [*prefix, sys.executable, "-I", "-S", "-c", _READ_ENVIRON, str(pid)]
        with popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
            out, err = proc.communicate(timeout=20)
        assert out.strip() in ("read", "denied"), err
        return out.strip()

    def control(kind: str) -> str:
        argv = [*prefix, sys.executable, "-I", "-S", "-c", _CONTROL, kind]
        with popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
            assert proc.stdout is not None
            assert proc.stdin is not None
            if proc.stdout.readline().strip() != "up":
                pytest.skip(f"a process run as {' '.join(prefix) or 'this uid'} does not start here")
            seen = read(proc.pid)
            proc.stdin.close()
        return seen

    if control("dumpable") != "read":
        pytest.skip("here a same-uid process cannot read even a dumpable process's environ: nothing to protect")
    if control("undumpable") != "denied":
        pytest.skip("here a same-uid process reads even an undumpable process's environ (CAP_SYS_PTRACE?)")
    return read


def test_a_worker_env_keeps_what_is_allowed_and_nothing_that_looks_secret() -> None:
    host = {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "2",
        "HF_HOME": "/cache/hf",
        "PYTHONPATH": "/src",
        "SKILLBANK_DATA_DIR": "/data",
        "EDITOR": "vi",
        "AWS_SESSION_TOKEN": "x",
        **SECRETS,
    }
    assert worker_env(host=host) == {"PATH": "/usr/bin", "HOME": "/home/me", "LC_ALL": "C.UTF-8"}
    embedder = worker_env(ENV_NAMES, ENV_PREFIXES, ENV_DEFAULTS, host=host)
    assert embedder == {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "2",
        "HF_HOME": "/cache/hf",
        "PYTHONPATH": "/src",
        "MALLOC_ARENA_MAX": "2",
    }
    assert worker_env(prefixes=ENV_PREFIXES, defaults=ENV_DEFAULTS, host={"MALLOC_ARENA_MAX": "4"}) == {
        "MALLOC_ARENA_MAX": "4"
    }
    assert worker_env(["DEPLOY_KEY"], ("AUTH",), {"API_TOKEN": "t"}, host={"DEPLOY_KEY": "k", "AUTH_X": "a"}) == {}


def test_no_worker_is_given_the_servers_keys_and_tokens(start_worker: Callable[[], int]) -> None:
    pid = start_worker()
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except PermissionError:
        pytest.skip("only root can read an undumpable worker's environ (the scrub itself is tested above)")
    names = {entry.partition(b"=")[0].decode() for entry in environ.split(b"\0") if entry}
    assert "PATH" in names
    assert not names & set(SECRETS)
    for value in SECRETS.values():
        assert value.encode() not in environ


def test_a_same_uid_process_cannot_read_a_workers_environ(
    same_uid_reader: Callable[[int], str], start_worker: Callable[[], int]
) -> None:
    assert same_uid_reader(start_worker()) == "denied"
