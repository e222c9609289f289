"""`make_undumpable`: the standard library only, so that the server and its `-I -S` worker processes (syntax,
redaction) and the embedder worker can all call it first thing, at the cost of importing `ctypes` (~3 ms)."""

from __future__ import annotations

import ctypes

PR_SET_DUMPABLE = 4


def make_undumpable() -> bool:
    """Make this process not dumpable: a same-uid process without CAP_SYS_PTRACE (a test under the plain local
    backend) can then no longer read its `/proc/PID/environ` (the API keys) or open its `/proc/PID/fd` (the MCP
    wire, the Cancel pipe), read its memory or ptrace it. It also means no core dump, and no debugger attaching
    without root. An `execve` makes a process dumpable again: every program the server starts must call this itself.
    False where it cannot be done (not Linux)."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    return bool(prctl(PR_SET_DUMPABLE, ctypes.c_ulong(0), 0, 0, 0) == 0)
