"""`skillbank serve --transport http` at its edges: a port in use, the bearer scheme's case, host names' case, a
client that hangs up mid-body."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from mcp_server.http import BearerAuth

pytestmark = pytest.mark.e2e

TOKEN = "edge-token"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _env(tmp_path: Path, token: str | None) -> dict[str, str]:
    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path / "home"), "SKILLBANK_EMBEDDER": "hash"}
    env.pop("SKILLBANK_TOKEN", None)
    return env | ({"SKILLBANK_TOKEN": token} if token else {})


def _command(port: int, tmp_path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_server", "serve", "--transport", "http", "--port", str(port),
            "--workspace", str(tmp_path), *args]  # fmt: skip


@contextmanager
def serve(tmp_path: Path, *args: str) -> Iterator[int]:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = int(free.getsockname()[1])
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(_command(port, tmp_path, *args), env=_env(tmp_path, TOKEN), stdout=subprocess.DEVNULL,
                                stderr=sink, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"server did not start: {log.read_text()}")
            time.sleep(0.05)
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)


def test_a_port_in_use_is_refused_with_exit_2_before_the_startup_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        out = subprocess.run(_command(port, tmp_path), env=_env(tmp_path, None), capture_output=True, text=True,
                             timeout=60)  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert f"skillbank: error: port {port} is already in use on 127.0.0.1" in out.stderr
    assert "--port" in out.stderr
    assert "serving MCP" not in out.stderr
    assert "Traceback" not in out.stderr
    assert "Errno" not in out.stderr


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("header", "status"),
    [(f"Bearer {TOKEN}", 200), (f"bearer {TOKEN}", 200), (f"BEARER  {TOKEN}", 200), ("Bearer nope", 401),
     (f"Basic {TOKEN}", 401), (TOKEN, 401), (f"Bearer {TOKEN}x", 401), ("", 401)],
)  # fmt: skip
async def test_the_bearer_scheme_is_case_insensitive_and_the_token_must_match(header: str, status: int) -> None:
    async def ok(scope: dict, receive: object, send: object) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]

    transport = httpx.ASGITransport(app=BearerAuth(ok, TOKEN))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        response = await http.get("/mcp", headers={"Authorization": header} if header else {})
    assert response.status_code == status


def test_host_names_and_origins_match_in_any_case_through_the_sdks_check(tmp_path: Path) -> None:
    with serve(tmp_path, "--allowed-host", "Skills.Internal", "--allowed-host", "10.0.0.5:9999") as port:
        url = f"http://127.0.0.1:{port}/mcp"

        def post(lowercase_bearer: bool = False, **headers: str) -> httpx.Response:
            auth = f"{'bearer' if lowercase_bearer else 'Bearer'} {TOKEN}"
            return httpx.post(url, json=INITIALIZE, headers={**ACCEPT, "Authorization": auth, **headers}, timeout=30)

        answered = {
            "LOCALHOST host": post(Host=f"LOCALHOST:{port}"),
            "Skills.Internal host": post(Host=f"Skills.Internal:{port}"),
            "SKILLS.INTERNAL host": post(Host="SKILLS.INTERNAL"),
            "Skills.Internal origin": post(Origin="http://Skills.Internal:1234"),
            "LOCALHOST origin": post(Origin=f"HTTP://LOCALHOST:{port}"),
            "lowercase bearer": post(lowercase_bearer=True),
        }
        refused = {
            "other host": post(Host=f"Other.Internal:{port}"),
            "other origin": post(Origin="http://Evil.Example"),
        }
    for what, response in answered.items():
        assert response.status_code == 200, (what, response.status_code, response.text)
    assert refused["other host"].status_code == 421
    assert "--allowed-host other.internal" in refused["other host"].json()["detail"]
    assert refused["other origin"].status_code == 403


def test_a_client_that_hangs_up_before_its_body_arrives_is_one_warning_line_and_the_server_serves_on(
    tmp_path: Path,
) -> None:
    body = json.dumps(INITIALIZE).encode()
    with serve(tmp_path) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        headers = {**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
        opened = httpx.post(url, json=INITIALIZE, headers=headers, timeout=30)
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-06-18"}
        for extra in ({}, session):  # a new session's opening request, and a request of a live session
            with socket.create_connection(("127.0.0.1", port)) as sock:
                fields = {**headers, **extra, "Content-Type": "application/json", "Content-Length": len(body) + 100}
                lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", *(f"{k}: {v}" for k, v in fields.items())]
                sock.sendall("\r\n".join([*lines, "", ""]).encode() + body[:20])
            time.sleep(0.5)
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert httpx.post(url, json=ping, headers={**headers, **session}, timeout=30).status_code == 200
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log
    assert log.count("hung up before its request body arrived") == 2, log
