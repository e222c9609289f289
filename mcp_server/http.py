"""The streamable-HTTP transport: bearer-token auth, DNS-rebinding protection, and the exec-tool policy.

Over stdio the client is the local user's own agent. Over HTTP anyone who reaches the port is a client, so:
- binding anything but loopback requires a token (`SKILLBANK_TOKEN`), and with a token every request must carry
  `Authorization: Bearer <token>` or gets 401;
- the SDK's Host/Origin checks stay on (loopback names, or the bound host and this machine's names);
- `run_tests` and `apply_patch` (a remote shell, in effect) are only exposed with `--allow-exec`.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import socket
from collections.abc import Iterable

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
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
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized", "detail": "send Authorization: Bearer <SKILLBANK_TOKEN>"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="skillbank"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def check_bind(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"refusing to serve HTTP on {host} without a token: set SKILLBANK_TOKEN (clients then send "
            "'Authorization: Bearer <token>'), or bind 127.0.0.1"
        )


def security_settings(host: str, extra_hosts: Iterable[str] = ()) -> TransportSecuritySettings:
    """Allowed Host/Origin headers: loopback names, the bound host, this machine's names, and `extra_hosts`."""
    names = set(LOOPBACK_NAMES) | set(extra_hosts)
    if not is_loopback(host):
        if host in ("0.0.0.0", "::"):
            hostname = socket.gethostname()
            names |= {hostname, socket.getfqdn()}
            with contextlib.suppress(OSError):
                names |= set(socket.gethostbyname_ex(hostname)[2])
        else:
            names.add(host)
    hosts = sorted({f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + hosts,
        allowed_origins=[f"{scheme}://{h}:*" for h in hosts for scheme in ("http", "https")],
    )


def http_app(server: MCPServer, *, host: str, token: str | None, extra_hosts: Iterable[str] = ()) -> ASGIApp:
    check_bind(host, token)
    app: ASGIApp = server.streamable_http_app(host=host, transport_security=security_settings(host, extra_hosts))
    return BearerAuth(app, token) if token else app


async def serve_http(
    server: MCPServer, *, host: str, port: int, token: str | None, extra_hosts: Iterable[str] = ()
) -> None:
    import uvicorn

    app = http_app(server, host=host, token=token, extra_hosts=extra_hosts)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
