"""llama.cpp's OpenAI-compatible server (`python -m llama_cpp.server`) on a free loopback port.

Started on the first request and stopped when `stop()` is called or the process exits (atexit): a CLI command that
never asks the model never pays the start-up. The server runs in its own process group, so stopping it kills all
of it, under `agent.local.child`, which ends it when this process is gone however it ended (`kill -9` included).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from agent.local.weights import INSTALL_HINT, LocalModelError

START_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = 8192,
        threads: int | None = None,
        log: Path | None = None,
        module: str = "llama_cpp.server",
    ):
        self.model_path = model_path
        self.module = module
        """The server module run in the child (another OpenAI-compatible one in tests)."""
        self.n_ctx = n_ctx
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.log = log
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._watch_write: int | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def ensure_started(self) -> str:
        """Start the server once (thread-safe) and wait until it answers; returns its base URL."""
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                return self.base_url
            if importlib.util.find_spec(self.module.split(".")[0]) is None:
                raise LocalModelError(f"llama-cpp-python with its server is not installed: {INSTALL_HINT}")
            self.port = free_port()
            # The child keeps the read end; the write end stays here only (non-inheritable), so the child sees
            # end-of-file exactly when this process is gone.
            watch_read, self._watch_write = os.pipe()
            argv = [sys.executable, "-m", "agent.local.child", str(watch_read), self.module,
                    "--model", str(self.model_path), "--host", "127.0.0.1", "--port", str(self.port),
                    "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads)]  # fmt: skip
            out = self.log.open("ab") if self.log else subprocess.DEVNULL
            try:
                self._process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                                 pass_fds=(watch_read,))  # fmt: skip
            finally:
                os.close(watch_read)
            atexit.register(self.stop)
            self._wait_ready()
            return self.base_url

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        assert self._process is not None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise LocalModelError(
                    f"llama.cpp's server exited with status {self._process.returncode} while loading "
                    f"{self.model_path.name}" + (f"; see {self.log}" if self.log else "")
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise LocalModelError(f"llama.cpp's server did not answer within {START_TIMEOUT_S:.0f} s")

    def stop(self) -> None:
        process, self._process = self._process, None
        if self._watch_write is not None:
            with contextlib.suppress(OSError):
                os.close(self._watch_write)
            self._watch_write = None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
