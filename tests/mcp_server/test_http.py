"""`skillbank serve --transport http`: bearer token, loopback policy, exec tools only with --allow-exec."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
import typer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_server.cli.serve import select_tools
from mcp_server.http import HostPolicy, interface_addresses, security_settings
from skills_store.errors import ConfigError

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TOKEN = "s3cret-token-for-tests"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(tmp_path: Path, *args: str, token: str | None = TOKEN) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path / "home"), "SKILLBANK_EMBEDDER": "hash"}
    env.pop("SKILLBANK_TOKEN", None)
    if token:
        env["SKILLBANK_TOKEN"] = token
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_server", "serve", "--transport", "http", "--port", str(port),
             "--workspace", str(tmp_path), *args],
            env=env, stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"server did not start: {log.read_text()}")
            try:
                proc.wait(timeout=0.05)
                pytest.fail(f"server exited: {log.read_text()}")
            except subprocess.TimeoutExpired:
                pass
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)


@asynccontextmanager
async def authed_client(url: str, token: str = TOKEN) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def test_requests_without_the_token_get_401(tmp_path: Path) -> None:
    with serve(tmp_path) as url:
        response = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        wrong = httpx.post(url, json={}, headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401


async def test_with_the_token_exec_tools_are_hidden_unless_allowed(tmp_path: Path) -> None:
    with serve(tmp_path) as url:
        async with authed_client(url) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
    assert names == ["record_trajectory", "search_skills"]


async def test_allow_exec_exposes_every_tool(tmp_path: Path) -> None:
    with serve(tmp_path, "--allow-exec") as url:
        async with authed_client(url) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
    assert names == ["apply_patch", "record_trajectory", "run_tests", "search_skills"]


def test_binding_beyond_loopback_without_a_token_is_refused(tmp_path: Path) -> None:
    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path / "home")}
    env.pop("SKILLBANK_TOKEN", None)
    out = subprocess.run(
        [sys.executable, "-m", "mcp_server", "serve", "--transport", "http", "--host", "0.0.0.0"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert "refusing to serve HTTP on 0.0.0.0 without a token" in out.stderr
    assert "Traceback" not in out.stderr


def test_asking_for_exec_tools_over_http_without_allow_exec_is_an_error(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mcp_server", "serve", "--transport", "http", "--tools", "run_tests"],
        env={**os.environ, "SKILLBANK_HOME": str(tmp_path / "home")}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert "run_tests execute or write workspace code; over HTTP that needs --allow-exec" in out.stderr


@pytest.mark.parametrize("tools", ["", ",", " , "])
def test_a_tools_list_that_names_no_tool_is_refused(tools: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--tools ''` served every tool and `--tools ,` none, both with exit 0."""
    with pytest.raises(typer.Exit) as stopped:
        select_tools("stdio", tools, allow_exec=False)
    assert stopped.value.exit_code == 2
    assert "--tools names no tool; name one or more of search_skills" in capsys.readouterr().err


def test_a_tool_named_twice_is_served_once() -> None:
    assert select_tools("stdio", "search_skills, search_skills,record_trajectory", allow_exec=False) == [
        "search_skills",
        "record_trajectory",
    ]


def test_dns_rebinding_protection_accepts_only_known_hosts() -> None:
    loopback = security_settings("127.0.0.1")
    assert loopback.enable_dns_rebinding_protection
    assert "localhost:*" in loopback.allowed_hosts
    assert "evil.example:*" not in loopback.allowed_hosts
    bound = security_settings("10.1.2.3", ["skills.internal"])
    assert {"10.1.2.3:*", "skills.internal:*"} <= set(bound.allowed_hosts)


def test_a_foreign_host_header_is_rejected(tmp_path: Path) -> None:
    with serve(tmp_path) as url:
        response = httpx.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"},
        )
    assert response.status_code in (400, 421)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _post_as(url: str, host: str) -> httpx.Response:
    """A request to the loopback server that says it was sent to `host` (as a client on the LAN would)."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": host, "Accept": "application/json, text/event-stream"}
    return httpx.post(url, json=INITIALIZE, headers=headers, timeout=30)


def test_a_host_named_by_allowed_host_is_answered_and_another_gets_a_421_that_says_how(tmp_path: Path) -> None:
    with serve(tmp_path, "--allowed-host", "10.1.2.3", "--allowed-host", "skills.internal:8000") as url:
        port = url.split(":")[2].split("/")[0]
        by_ip = _post_as(url, f"10.1.2.3:{port}")
        by_name = _post_as(url, "skills.internal:8000")
        wrong_port = _post_as(url, "skills.internal:9000")
        other = _post_as(url, f"10.9.9.9:{port}")
    assert by_ip.status_code == 200, by_ip.text
    assert by_name.status_code == 200, by_name.text
    assert wrong_port.status_code == 421
    assert other.status_code == 421
    detail = other.json()["detail"]
    assert "does not answer for Host '10.9.9.9:" in detail
    assert "restart it with --allowed-host 10.9.9.9" in detail
    log = (tmp_path / "server.log").read_text()
    assert "accepting Host 10.1.2.3, 127.0.0.1, [::1], localhost, skills.internal:8000" in log


def test_an_allowed_host_that_is_not_a_host_is_refused_at_startup(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mcp_server", "serve", "--transport", "http", "--allowed-host", "http://10.1.2.3/"],
        env={**os.environ, "SKILLBANK_HOME": str(tmp_path / "home")}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert "--allowed-host 'http://10.1.2.3/' is not a host" in out.stderr
    assert not (tmp_path / "home").exists()


def test_the_host_policy_takes_names_on_any_port_and_host_port_exactly() -> None:
    policy = HostPolicy.for_bind("127.0.0.1", ["Skills.Internal", "10.0.0.5:8765", "[fd00::5]"])
    assert policy.accepts("skills.internal:8765")
    assert policy.accepts("10.0.0.5:8765")
    assert not policy.accepts("10.0.0.5:8766")
    assert policy.accepts("[fd00::5]:8765")
    assert not policy.accepts("evil.example:8765")
    with pytest.raises(ConfigError, match="port 70000 is outside"):
        HostPolicy.for_bind("127.0.0.1", ["h:70000"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="interface addresses are read the Linux way")
def test_bound_to_all_interfaces_the_machines_own_addresses_are_accepted() -> None:
    own = interface_addresses()
    assert "127.0.0.1" in own
    policy = HostPolicy.for_bind("0.0.0.0")
    for address in own:
        assert policy.accepts(f"[{address}]:8765" if ":" in address else f"{address}:8765"), address
