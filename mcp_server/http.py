"""The streamable-HTTP transport: bearer-token auth, DNS-rebinding protection, and the exec-tool policy.

Over stdio the client is the local user's own agent. Over HTTP anyone who reaches the port is a client, so:
- binding anything but loopback requires a token (`SKILLBANK_TOKEN`), and with a token every request must carry
  `Authorization: Bearer <token>` (the scheme in any case, as RFC 9110 has it) or gets 401;
- the SDK's Host/Origin checks stay on (DNS-rebinding protection): loopback names, the bound host, this machine's
  names when bound to all interfaces, and every `--allowed-host` (the name or IP clients put in their URL). A
  request for another host gets 421 with a message naming the host and the option that accepts it, and the
  startup line on stderr lists what is accepted. Host names match in any case (`Host` and `Origin` are lowercased
  before the SDK's check, which compares them as written);
- `run_tests` and `apply_patch` (a remote shell, in effect) are only exposed with `--allow-exec`.

A client that hangs up before its request body has arrived (a dropped connection, a killed client) is one warning
line in the server log; the SDK logs it as an error with a traceback.

The port is bound before the startup line is printed: a port in use (or one that cannot be bound) is a
`ConfigError` naming it and the option to change, not a line claiming to serve followed by uvicorn's error.
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import ipaddress
import json
import logging
import re
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from skills_store.errors import ConfigError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """ASGI middleware: every HTTP request must present the token (constant-time comparison)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, credentials = given.strip().partition(b" ")
        matches = hmac.compare_digest(credentials.lstrip(b" "), self._expected)  # the token: constant time
        if matches and scheme.lower() == b"bearer":  # the scheme is case-insensitive (RFC 9110 11.1)
            await self.app(scope, receive, send)
            return
        payload = {"error": "unauthorized", "detail": "send Authorization: Bearer <SKILLBANK_TOKEN>"}
        await _send_json(send, 401, payload, [(b"www-authenticate", b'Bearer realm="skillbank"')])


def check_bind(host: str, token: str | None, allowed_hosts: Iterable[str] = ()) -> None:
    """Refuse to serve beyond loopback without a token, and refuse `--allowed-host` values that are not hosts."""
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"refusing to serve HTTP on {host} without a token: set SKILLBANK_TOKEN (clients then send "
            "'Authorization: Bearer <token>'), or bind 127.0.0.1"
        )
    for value in allowed_hosts:
        parse_allowed_host(value)


_HOST_RE = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+|[A-Za-z0-9_.\-]+)(?::(?P<port>\d{1,5}))?$")


@dataclass(frozen=True)
class HostPolicy:
    """Which Host headers the server answers: `names` on any port, `exact` as `host:port` only."""

    names: tuple[str, ...]
    exact: tuple[str, ...] = ()

    @classmethod
    def for_bind(cls, host: str, allowed: Iterable[str] = ()) -> HostPolicy:
        """Loopback names, the bound host (this machine's names and IPs for 0.0.0.0 / ::), and `allowed`."""
        names = set(LOOPBACK_NAMES)
        exact: set[str] = set()
        for value in allowed:
            name, port = parse_allowed_host(value)
            if port is None:
                names.add(name)
            else:
                exact.add(f"{_bracket(name)}:{port}")
        if not is_loopback(host):
            if host in ("0.0.0.0", "::"):
                hostname = socket.gethostname()
                names |= {hostname, socket.getfqdn(), *interface_addresses()}
                with contextlib.suppress(OSError):
                    names |= set(socket.gethostbyname_ex(hostname)[2])
            else:
                names.add(host)
        return cls(tuple(sorted({_bracket(n.lower()) for n in names})), tuple(sorted(exact)))

    def accepts(self, host_header: str) -> bool:
        if host_header in self.exact or host_header in self.names:
            return True
        name, _, port = host_header.rpartition(":")
        return bool(name) and port.isdigit() and name in self.names

    def describe(self) -> str:
        return ", ".join([*self.names, *self.exact])


def interface_addresses() -> set[str]:
    """This machine's own IP addresses (Linux: interface ioctl and /proc/net/if_inet6; no packet is sent).

    Bound to 0.0.0.0, the server answers clients that connect by any of them, as the README's setup expects.
    """
    found: set[str] = set()
    with contextlib.suppress(ImportError, OSError, AttributeError):
        import fcntl
        import struct

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            for _, name in socket.if_nameindex():
                with contextlib.suppress(OSError):
                    request = struct.pack("256s", name.encode()[:15])
                    found.add(socket.inet_ntoa(fcntl.ioctl(probe.fileno(), 0x8915, request)[20:24]))  # SIOCGIFADDR
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            found.add(str(ipaddress.IPv6Address(bytes.fromhex(line.split()[0]))))
    return found


def _bracket(name: str) -> str:
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def parse_allowed_host(value: str) -> tuple[str, int | None]:
    """`--allowed-host` takes what clients put in their URL: a name or IP, optionally `:port` (IPv6 in brackets)."""
    value = value.strip()
    match = _HOST_RE.match(value)
    if not value or "/" in value or match is None:
        raise ConfigError(
            f"--allowed-host {value!r} is not a host: give the name or IP clients connect to, optionally with "
            "a port (skills.internal, 10.0.0.5, 10.0.0.5:8765, [fd00::5]), not a URL"
        )
    port = match["port"]
    if port is None or (value.count(":") > 1 and not value.startswith("[")):  # bare IPv6: the colons are the address
        return value.strip("[]").lower(), None
    if not 1 <= int(port) <= 65535:
        raise ConfigError(f"--allowed-host {value!r}: port {port} is outside 1..65535")
    return value[: -len(port) - 1].strip("[]").lower(), int(port)


def security_settings(host: str, extra_hosts: Iterable[str] = ()) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding settings for the same policy (its check stays on behind ours)."""
    policy = HostPolicy.for_bind(host, extra_hosts)
    hosts = policy.names
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + list(hosts) + list(policy.exact),
        allowed_origins=[f"{scheme}://{h}:*" for h in hosts for scheme in ("http", "https")]
        + [f"{scheme}://{h}" for h in (*hosts, *policy.exact) for scheme in ("http", "https")],
    )


class HostCheck:
    """ASGI middleware: a request for a host this server does not answer gets 421 and how to accept it."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Host names are case-insensitive; the SDK's check behind this one compares Host and Origin as written
        headers = [(k, v.lower() if k in (b"host", b"origin") else v) for k, v in scope.get("headers") or []]
        given = dict(headers).get(b"host", b"").decode("latin-1")
        if self.policy.accepts(given):
            await self.app({**scope, "headers": headers}, receive, send)
            return
        name = given.rpartition(":")[0] if given.rpartition(":")[2].isdigit() else given
        detail = (
            f"this skillbank server does not answer for Host {given!r} (DNS-rebinding protection); if clients "
            f"reach it by that name, restart it with --allowed-host {name.strip('[]') or 'HOST'}"
        )
        await _send_json(send, 421, {"error": "host not allowed", "detail": detail})


async def _send_json(send: Send, status: int, payload: dict, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(server: MCPServer, *, host: str, token: str | None, extra_hosts: Iterable[str] = ()) -> ASGIApp:
    check_bind(host, token)
    policy = HostPolicy.for_bind(host, extra_hosts)
    app: ASGIApp = server.streamable_http_app(host=host, transport_security=security_settings(host, extra_hosts))
    return HostCheck(BearerAuth(app, token) if token else app, policy)


class ClientGone(logging.Filter):
    """Rewrites the SDK's error record for a request whose client disconnected mid-body as one warning line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], ClientDisconnect):
            record.msg, record.args = "a client hung up before its request body arrived; the request was dropped", ()
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
            record.exc_info, record.exc_text = None, None
        return True


def quiet_client_disconnects() -> None:
    """Install `ClientGone` on the SDK's streamable-HTTP logger (once)."""
    sdk = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, ClientGone) for f in sdk.filters):
        sdk.addFilter(ClientGone())


async def serve_http(
    server: MCPServer, *, host: str, port: int, token: str | None, extra_hosts: Iterable[str] = ()
) -> None:
    import uvicorn

    extra_hosts = tuple(extra_hosts)
    quiet_client_disconnects()
    app = http_app(server, host=host, token=token, extra_hosts=extra_hosts)
    policy = HostPolicy.for_bind(host, extra_hosts)
    sock = bind_socket(host, port)
    print(
        f"skillbank: serving MCP over HTTP on {_bracket(host)}:{port} (path /mcp); accepting Host {policy.describe()}"
        " (any port unless given); clients that use another name or IP need --allowed-host NAME",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()


def bind_socket(host: str, port: int) -> socket.socket:
    """The listening socket, bound as uvicorn binds it; a port that cannot be had is a `ConfigError` saying why."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        where = f"{_bracket(host)}:{port}"
        if exc.errno == errno.EADDRINUSE:
            problem = f"port {port} is already in use on {host} (another skillbank serve, or another program)"
            fix = "stop that program, or serve on a free port with --port N"
        elif exc.errno == errno.EACCES:
            problem, fix = f"not allowed to listen on {where}", "ports below 1024 need privileges: pick another --port"
        elif exc.errno == errno.EADDRNOTAVAIL:
            problem = f"cannot listen on {host}: not an address of this machine"
            fix = "give --host 127.0.0.1, 0.0.0.0 or one of its own addresses"
        else:
            problem, fix = f"cannot listen on {where} ({exc.strerror or exc})", "check --host and --port"
        raise ConfigError(f"{problem}; {fix}") from None
    return sock
