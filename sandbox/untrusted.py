"""Opening files the code under test could have written (a junit report, a workspace file, a scratch dir's owner
file, a `.git` file): never through a symlink, never blocking (opening a FIFO that has no writer waits forever, and
this runs on the host), and read only when the file is a regular one. Standard library only."""

from __future__ import annotations

import os
import stat

#: `os.open` flags for such a file: read-only, no symlink followed, no wait on a FIFO, not inherited.
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def read_small(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """At most `limit` bytes of `path`; None when it cannot be opened or is not a regular file."""
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)
