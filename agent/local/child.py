"""The local model server's process: runs a server module as `__main__` and leaves when its parent is gone.

`python -m agent.local.child FD MODULE ARGS...` inherits the read end of a pipe whose write end only the parent
holds. Nothing is ever written to it; when the parent exits in any way (Ctrl-C, `kill -9`, a crash), the kernel
closes the write end, the read returns end-of-file and this process exits at once. Without it, a `skillbank eval`
killed by a signal left llama.cpp's server running with the model's 3.6 GB resident (atexit handlers do not run
on a signal), and a death signal (PR_SET_PDEATHSIG) would fire when the *thread* that started the server ended.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading


def watch_parent(fd: int) -> None:
    """Block until the pipe reaches end-of-file (the parent is gone), then exit the whole process."""
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while pipe.read(1):
            pass
    os._exit(0)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or not argv[0].isdigit():
        raise SystemExit("usage: python -m agent.local.child FD MODULE [ARGS...]")
    fd, module, rest = int(argv[0]), argv[1], argv[2:]
    threading.Thread(target=watch_parent, args=(fd,), name="parent-watch", daemon=True).start()
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
