"""Reading a child's stdout and stderr into tail buffers without threads, with a deadline.

One selector watches both pipes and, where the kernel has pidfds, the process itself: a command that exits while a
background process it started still holds the pipes open is noticed at once, not at the deadline.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time

from sandbox.exec.base import Cancel, TailBuffer

_CHUNK = 1 << 16
#: How often the exit is checked when the kernel has no pidfd.
_POLL_S = 0.05


def pump_process(
    proc: subprocess.Popen[bytes],
    out: TailBuffer,
    err: TailBuffer,
    *,
    deadline: float,
    until_exit: bool = True,
    cancel: Cancel | None = None,
) -> bool:
    """Copy `proc`'s stdout and stderr into `out` and `err`.

    With `until_exit`, return as soon as the process has exited (output still in the pipes stays there for a
    later call); otherwise read until both pipes are closed. Returns True when `deadline` (a `time.monotonic()`
    value) passed first, or `cancel` was set (the caller tells the two apart).
    """
    sel = selectors.DefaultSelector()
    pidfd = -1
    try:
        for stream, buf in ((proc.stdout, out), (proc.stderr, err)):
            if stream is not None and not stream.closed:
                os.set_blocking(stream.fileno(), False)
                sel.register(stream.fileno(), selectors.EVENT_READ, buf)
        if cancel is not None:
            if cancel.is_set():
                return True
            sel.register(cancel.fileno(), selectors.EVENT_READ, cancel)
        if until_exit and proc.poll() is None:
            pidfd = _open_pidfd(proc.pid)
            if pidfd >= 0:
                sel.register(pidfd, selectors.EVENT_READ, None)
        while True:
            if until_exit and proc.poll() is not None:
                return False
            if not until_exit and len(sel.get_map()) == 0:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            wait = remaining if (pidfd >= 0 or not until_exit) else min(remaining, _POLL_S)
            for key, _ in sel.select(timeout=wait):
                if cancel is not None and key.data is cancel:
                    return True
                if key.data is None:
                    sel.unregister(key.fd)
                    continue
                try:
                    chunk = os.read(key.fd, _CHUNK)
                except BlockingIOError:
                    continue
                if chunk:
                    key.data.write(chunk)
                else:
                    sel.unregister(key.fd)
    finally:
        sel.close()
        if pidfd >= 0:
            os.close(pidfd)


def _open_pidfd(pid: int) -> int:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return -1
    with contextlib.suppress(OSError):
        return int(opener(pid))
    return -1
