"""Which MCP session a tool call belongs to, on every transport the SDK serves.

| transport (protocol era)                       | session key                         | session ends when         |
| ---------------------------------------------- | ----------------------------------- | ------------------------- |
| any, with an `X-Skillbank-Session` HTTP header | `header:<sha256 of the value>`      | idle (no end signal)      |
| streamable HTTP, handshake era                 | `http:<Mcp-Session-Id>`             | the HTTP session ends     |
| stdio / in-memory, handshake era               | one key per connection              | the connection closes     |
| stdio, 2026-07-28 (a request-scoped envelope)  | one key per pipe                    | idle, or server shutdown  |
| in-process `mcp.Client(server)`, 2026-07-28    | one key per client                  | idle, or client exit      |
| streamable HTTP, 2026-07-28 (stateless)        | one key per request (`per_request`) | idle                      |

The 2026-07-28 protocol has no sessions: every request carries its own envelope and gets a fresh `Connection`.
Where a longer-lived channel exists (the stdio pipe, the in-process dispatcher pair) it stands for the
session. Over stateless HTTP nothing tells two clients apart (the client name is shared by every copy of an
agent), so each request is its own session rather than a guess that could mix two users' steps: a client that
wants one trajectory over many requests passes the `trajectory_id` the first call returned (or sends
`X-Skillbank-Session` with a value of its own, kept secret).

The SDK keeps the request's connection and dispatch context on private attributes; they are read defensively
here, in one place, and every path is covered by a test.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
import weakref
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

SESSION_HEADER = "x-skillbank-session"


@dataclass(frozen=True)
class SessionIdentity:
    key: str
    source: str
    """`mcp:<clientInfo.name>` when the client said its name, else `mcp`."""
    connection: Any | None = None
    """The SDK `Connection` whose end ends the session, when it lives as long as the session."""
    per_request: bool = False
    """True when nothing outlives this request (stateless HTTP without the header): the session is the request."""


class _IdentityKeys:
    """A fresh key per live object, by identity (transport contexts compare equal by value)."""

    def __init__(self) -> None:
        self._keys: dict[int, tuple[Any, str]] = {}

    def key(self, obj: object, prefix: str) -> str:
        oid = id(obj)
        entry = self._keys.get(oid)
        if entry is not None and _deref(entry[0]) is obj:
            return entry[1]
        key = f"{prefix}:{uuid.uuid4().hex[:16]}"
        try:
            ref: Any = weakref.ref(obj, functools.partial(self._drop, oid))
        except TypeError:
            ref = obj  # not weak-referenceable: keep it (one per pipe or client, so bounded)
        self._keys[oid] = (ref, key)
        return key

    def _drop(self, oid: int, ref: Any) -> None:
        entry = self._keys.get(oid)
        if entry is not None and entry[0] is ref:
            del self._keys[oid]


def _deref(ref: Any) -> Any:
    return ref() if isinstance(ref, weakref.ref) else ref


_KEYS = _IdentityKeys()


def session_identity(ctx: Context) -> SessionIdentity:
    """The session of the request behind `ctx` (see the module doc)."""
    session = ctx.request_context.session
    params = session.client_params
    info = params.client_info if params is not None else None
    source = f"mcp:{info.name}" if info is not None and info.name else "mcp"
    headers = ctx.headers or {}
    explicit = headers.get(SESSION_HEADER)
    if explicit:
        # The whole value counts (it is the client's secret): hashed, not cut, so two values never share a key.
        return SessionIdentity(f"header:{hashlib.sha256(explicit.strip().encode()).hexdigest()}", source)
    conn = getattr(session, "_connection", None)
    if conn is None:
        return _per_request(ctx, source)
    if getattr(conn, "session_id", None):
        return SessionIdentity(f"http:{conn.session_id}", source, conn)
    if conn.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        key = conn.state.setdefault("skillbank.session", f"conn:{uuid.uuid4().hex[:16]}")
        return SessionIdentity(key, source, conn)
    if getattr(conn, "has_standalone_channel", False):
        return SessionIdentity(_KEYS.key(conn.outbound, "pipe"), source)
    dctx = getattr(session, "_request_outbound", None)
    transport = getattr(getattr(dctx, "_inner", dctx), "transport", None)
    if transport is not None and getattr(transport, "kind", None) == "direct":
        return SessionIdentity(_KEYS.key(transport, "inproc"), source)
    return _per_request(ctx, source)


def _per_request(ctx: Context, source: str) -> SessionIdentity:
    """One key for this request (the same for every look-up during it), never shared with another request."""
    return SessionIdentity(_KEYS.key(ctx.request_context, "request"), source, per_request=True)
