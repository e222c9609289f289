"""The workspace's directories as a patch reads and writes them: each opened once, one name at a time from the root
and never through a symbolic link; every file is then reached by its name in a directory held open (`Place`).

Why: the jail checks where a path leads, and the file is read and written after that. In between, anything running
in the workspace (a test suite that `run_tests` started, which may write there) can swap a directory on the path
for a symbolic link to somewhere else, and a write by path would follow it out of the workspace. Through a
directory held open it cannot: one swapped after it was opened is still the one read and written (wherever it was
moved: a rename cannot take it off the workspace's file system), and a link found in its place before is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import stat
import weakref
from pathlib import Path
from typing import NamedTuple

_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_DIR_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW
#: Descriptors kept free besides the directories held: the file being read or staged, the server's own pipes.
HEADROOM = 64
#: The soft limit asked for when the hard one is unlimited (Linux's default ceiling, `fs.nr_open`).
_CEILING = 1 << 20


class TooManyDirectories(OSError):
    """The directories a patch reaches do not fit in this process's limit of open files, even raised."""

    def __init__(self, held: int, limit: int) -> None:
        self.problem = (
            f"the patch reaches {held}+ directories and this process may hold only {limit} files open (RLIMIT_NOFILE)"
        )
        super().__init__(errno.EMFILE, self.problem)
        self.held, self.limit = held, limit

    fix = "split the patch into patches that each reach fewer directories, or raise the server's `ulimit -n`"


class Place(NamedTuple):
    """A file's name in a directory held open: what every read, write, link and unlink goes through."""

    dir_fd: int
    name: str


class Dirs:
    """Open directories under `root` (a real path), by real path; closed by `close` (or when garbage collected)."""

    def __init__(self, root: Path | str) -> None:
        self.root = os.fspath(root)
        self._prefix = os.path.join(self.root, "")
        self._fds: dict[str, int] = {}
        self._closer = weakref.finalize(self, _close_all, self._fds)
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self._room = _CEILING if soft == resource.RLIM_INFINITY else soft - HEADROOM

    def fd(self, directory: str) -> int:
        """An fd on `directory` (the root or a real path below it), opened from the root one name at a time.

        Raises FileNotFoundError when it does not exist, NotADirectoryError when a name on the way is a file,
        OSError(ELOOP) when one is a symbolic link (a directory swapped for a link since it was checked), and
        TooManyDirectories when one more would not fit in the limit of open files (raised to the hard limit first).
        """
        found = self._fds.get(directory)
        if found is not None:
            return found
        if len(self._fds) >= self._room:
            self._room = _make_room(len(self._fds))
        if directory == self.root:
            opened = os.open(directory, _ROOT_FLAGS)
        else:
            if not directory.startswith(self._prefix):
                raise ValueError(f"{directory} is not inside {self.root}")
            parent, name = os.path.split(directory)
            parent_fd = self.fd(parent)
            try:
                opened = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
            except NotADirectoryError:
                if _is_link(parent_fd, name):
                    raise OSError(
                        errno.ELOOP, "a symbolic link has taken the place of a directory on the path", directory
                    ) from None
                raise
        self._fds[directory] = opened
        return opened

    def place(self, path: Path | str) -> Place:
        """Where the file at the real path `path` is reached (its directory opened as `fd` opens it)."""
        parent, name = os.path.split(path)
        return Place(self.fd(parent), name)

    def forget(self, directory: str) -> None:
        """Close the directory (removed, or about to be) and every directory held below it."""
        below = os.path.join(directory, "")
        for held in [held for held in self._fds if held == directory or held.startswith(below)]:
            os.close(self._fds.pop(held))

    def close(self) -> None:
        self._closer()

    def __enter__(self) -> Dirs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _make_room(held: int) -> int:
    """How many directories may be held once this process's soft limit of open files is raised to its hard one
    (every directory a patch reaches stays open until it is written); TooManyDirectories when `held` is that many."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = _CEILING if hard == resource.RLIM_INFINITY else hard
    if wanted > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
    if held >= soft - HEADROOM:
        raise TooManyDirectories(held, soft)
    return soft - HEADROOM


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _close_all(fds: dict[str, int]) -> None:
    for fd in fds.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()
