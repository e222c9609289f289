"""The local model server's lifecycle: started on demand, stopped by `stop()`, and gone when its parent is killed.

A stand-in module (an OpenAI-style `/v1/models` endpoint that takes llama.cpp's arguments) runs in place of
llama_cpp.server, so the tests need neither the model nor llama-cpp-python.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from agent.local.server import LlamaServer
from agent.local.weights import LocalModelError

FAKE_SERVER = textwrap.dedent(
    """
    import argparse, http.server, json
    parser = argparse.ArgumentParser()
    for name in ("--model", "--host", "--port", "--n_ctx", "--n_threads"):
        parser.add_argument(name)
    args = parser.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"data": [{"id": args.model}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    http.server.HTTPServer((args.host, int(args.port)), Handler).serve_forever()
    """
)


@pytest.fixture
def fake_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "fake_llama_server.py").write_text(FAKE_SERVER)
    root = Path(__file__).resolve().parents[3]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(root)]))  # the child's
    monkeypatch.syspath_prepend(str(tmp_path))  # the parent checks that the module is there
    return "fake_llama_server"


def gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_the_server_starts_on_demand_answers_and_stop_ends_it(tmp_path: Path, fake_module: str) -> None:
    server = LlamaServer(tmp_path / "model.gguf", threads=1, module=fake_module)
    url = server.ensure_started()
    assert httpx.get(f"{url}/models", timeout=5).json()["data"][0]["id"] == str(tmp_path / "model.gguf")
    assert server.ensure_started() == url  # started once
    pid = server._process.pid  # type: ignore[union-attr]
    server.stop()
    assert gone(pid)


def test_a_parent_killed_by_a_signal_takes_the_server_with_it(tmp_path: Path, fake_module: str) -> None:
    """atexit does not run on SIGKILL; the child's pipe reaches end-of-file and it leaves on its own."""
    parent = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from agent.local.server import LlamaServer
        server = LlamaServer(Path({str(tmp_path / "m.gguf")!r}), threads=1, module={fake_module!r})
        server.ensure_started()
        print(server._process.pid, flush=True)
        time.sleep(120)
        """
    )
    with subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            child = int(proc.stdout.readline())
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            assert gone(child), "the model server outlived its killed parent"
        finally:
            proc.kill()


def test_a_missing_server_module_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(LocalModelError, match="not installed"):
        LlamaServer(tmp_path / "m.gguf", module="no_such_llama_module.server").ensure_started()
