"""Which Python files of a workspace changed since git HEAD, found without letting the repository run anything.

This runs on the host, before every run (for the syntax reward), over a workspace the tests can write. Git is
therefore asked only for names and object ids (`ls-tree -r HEAD`, `ls-files --cached --others`), never to read the
working tree's contents: `git diff` hashes a stat-dirty file through the repo's clean filter, a command from a config
a test can plant (a `.git` it created in a workspace that had none, a `.git` file it pointed at a repo of its own).
This module hashes the files itself (git's blob id of the raw bytes): a file changed when its id is not HEAD's.

The repository is the one the workspace showed when it was first looked at (before any test of this server ran):
its git dir and work tree are remembered per workspace (`RepoMemory`) and passed explicitly (GIT_DIR,
GIT_WORK_TREE), so a `.git` made or redirected later is never followed; when `<workspace>/.git` or the git dir is no
longer what it was then (also a `.git` that appeared in a workspace first seen without one: this cannot tell a
user's `git init` between runs from a test's), git is not run at all and every Python file counts as changed (a
note says so, and that a server restart picks up the repo as it is now).
Git runs with the operator's environment minus `GIT_*`, fsmonitor and the untracked cache off, no transport
(`protocol.allow=never`: no lazy fetch of missing objects), within the caller's deadline.
Files are read only when they are regular files inside the workspace (opened non-blocking: a FIFO never hangs it).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.untrusted import OPEN_FLAGS, read_small
from sandbox.worker_env import worker_env

#: Directories never searched for Python files when the workspace is not a git repo.
SKIP_DIRS = frozenset(
    {".git", ".hg", ".venv", "venv", "env", "node_modules", "__pycache__", ".tox", ".nox", "build", "dist"}
    | {".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs"}
)
_GIT_OPTIONS = tuple(
    arg
    for option in (
        "core.fsmonitor=false",
        "core.untrackedCache=false",
        "protocol.allow=never",
        "submodule.recurse=false",
    )
    for arg in ("-c", option)
)
_REGULAR_MODES = (b"100644", b"100755")
_CACHE_AFTER_NS = 2_000_000_000
"""A file's hash is remembered only when its ctime is this much older than the hashing: a later write then changes
its ctime (no program can set it back), so a remembered hash is never stale."""


class Deadline:
    """A point in time the caller's work must end by; None: no limit (git calls still stop after a minute)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._end = None if seconds is None else time.monotonic() + seconds

    def left(self) -> float:
        return 60.0 if self._end is None else max(self._end - time.monotonic(), 0.0)

    @property
    def passed(self) -> bool:
        return self._end is not None and time.monotonic() >= self._end


@dataclass
class Source:
    """A changed Python file: its path relative to the workspace (as the file system names it) and its bytes."""

    rel: str
    data: bytes


@dataclass
class Changes:
    sources: list[Source] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Why the list may be incomplete, or why git was not used."""
    cut: bool = False
    """The deadline or a limit stopped the listing before every file was seen."""


@dataclass(frozen=True)
class _Repo:
    git_dir: str
    work_tree: str
    object_format: str
    git_dir_id: tuple[int, int]


@dataclass
class _Seen:
    mark: tuple[object, ...]
    repo: _Repo | None
    hashes: dict[str, tuple[tuple[int, int, int, int], bytes]] = field(default_factory=dict)
    """Blob ids of files hashed before, by path, with the (size, mtime, ctime, inode) they had."""


class RepoMemory:
    """The git repository each workspace showed when first seen, and the file hashes computed so far (one per
    server: `RunnerConfig` holds it)."""

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}
        self._lock = threading.Lock()

    def seen(self, ws: Path, deadline: Deadline) -> _Seen:
        key = str(ws)
        with self._lock:
            found = self._seen.get(key)
        if found is not None:
            return found
        mark = _mark(ws / ".git")
        found = _Seen(mark, _discover(ws, deadline))
        with self._lock:
            return self._seen.setdefault(key, found)


def changed_sources(
    ws: Path,
    *,
    memory: RepoMemory | None = None,
    deadline: Deadline | None = None,
    max_files: int = 2000,
    max_file_bytes: int = 2 << 20,
    max_total_bytes: int = 32 << 20,
) -> Changes:
    """The changed Python files of `ws` (see the module docstring), at most `max_files` of them and
    `max_total_bytes` in all; files over `max_file_bytes` are left out. Every `.py` file when there is no git HEAD."""
    deadline = deadline or Deadline(None)
    seen = (memory or RepoMemory()).seen(ws, deadline)
    changes = Changes()
    names: list[str] | None = None
    head: dict[str, bytes] | None = None
    if seen.repo is None:
        if _mark(ws / ".git") != seen.mark:
            changes.notes.append(
                "the workspace has a .git it did not have when the server first saw it (a git init, or a test): it "
                "is not used and every Python file was checked; restart the server to use the new repo"
            )
    else:
        if _mark(ws / ".git") != seen.mark or _identity(seen.repo.git_dir) != seen.repo.git_dir_id:
            changes.notes.append(
                "the workspace's .git is not what it was when the server first saw it (a test may have changed it): "
                "git was not used and every Python file was checked; a server restart picks up the repo as it is now"
            )
        else:
            head = _head_blobs(ws, seen.repo, deadline)
            names = _listed(ws, seen.repo, deadline) if head is not None else None
    if names is None:
        names, complete = _walk_python(ws, deadline, max_files)
        changes.cut = not complete
    reader = _Reader(ws, max_file_bytes)
    total = 0
    for rel in names:
        if deadline.passed or len(changes.sources) >= max_files or total >= max_total_bytes:
            changes.cut = True
            break
        found = reader.read(rel)
        if found is None:
            continue
        data, info = found
        if head is not None and head.get(rel) == _blob_id(seen, rel, data, info):
            continue
        changes.sources.append(Source(rel, data))
        total += len(data)
    return changes


def _discover(ws: Path, deadline: Deadline) -> _Repo | None:
    """The repository git finds from `ws` now, with its git dir resolved; None when there is none (or git)."""
    found = _git(ws, None, ["rev-parse", "--absolute-git-dir", "--show-toplevel", "--show-object-format"], deadline)
    lines = found.decode(errors="surrogateescape").splitlines() if found is not None else []
    if len(lines) != 3 or lines[2] not in ("sha1", "sha256"):
        return None
    ident = _identity(lines[0])
    return None if ident is None else _Repo(lines[0], lines[1], lines[2], ident)


def _head_blobs(ws: Path, repo: _Repo, deadline: Deadline) -> dict[str, bytes] | None:
    """HEAD's regular files under `ws` (relative names) and their blob ids; None when there is no HEAD."""
    out = _git(ws, repo, ["ls-tree", "-r", "-z", "HEAD", "--", "."], deadline)
    if out is None:
        return None
    blobs: dict[str, bytes] = {}
    for record in out.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        parts = meta.split(b" ")
        if len(parts) == 3 and parts[0] in _REGULAR_MODES and name.endswith(b".py"):
            blobs[name.decode(errors="surrogateescape")] = parts[2]
    return blobs


def _listed(ws: Path, repo: _Repo, deadline: Deadline) -> list[str] | None:
    """The `.py` files of the index and the untracked, not ignored ones, under `ws`."""
    out = _git(ws, repo, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], deadline)
    if out is None:
        return None
    names = {name.decode(errors="surrogateescape") for name in out.split(b"\0") if name.endswith(b".py")}
    return sorted(names)


def _git(ws: Path, repo: _Repo | None, args: list[str], deadline: Deadline) -> bytes | None:
    git = shutil.which("git")
    if git is None or deadline.passed:
        return None
    # What git needs of the server's environment (where its config is), never the server's keys, tokens or DSNs:
    # a test of the same uid can read a running git's /proc/PID/environ.
    env = worker_env(("XDG_CONFIG_HOME",))
    env |= {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_PAGER": "cat"}
    if repo is not None:
        env |= {"GIT_DIR": repo.git_dir, "GIT_WORK_TREE": repo.work_tree}
    try:
        done = subprocess.run(
            [git, *_GIT_OPTIONS, *args],
            cwd=ws,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=max(deadline.left(), 0.01),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _blob_id(seen: _Seen, rel: str, data: bytes, info: os.stat_result) -> bytes:
    """git's id of `data` as a blob, remembered by the file's status (see `_CACHE_AFTER_NS`)."""
    assert seen.repo is not None
    key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
    cached = seen.hashes.get(rel)
    if cached is not None and cached[0] == key:
        return cached[1]
    digest = hashlib.new(seen.repo.object_format, b"blob %d\0" % len(data))
    digest.update(data)
    oid = digest.hexdigest().encode()
    if time.time_ns() - info.st_ctime_ns > _CACHE_AFTER_NS:
        seen.hashes[rel] = (key, oid)
    return oid


class _Reader:
    """Reads regular files inside the workspace only: not through a link (in the name or a directory above it),
    never blocking (a FIFO is opened non-blocking and then refused)."""

    def __init__(self, ws: Path, max_bytes: int) -> None:
        self.ws, self.max_bytes = os.fspath(ws), max_bytes
        self._prefix = os.path.join(os.path.realpath(ws), "")
        self._dirs: dict[str, bool] = {}

    def read(self, rel: str) -> tuple[bytes, os.stat_result] | None:
        """The file's bytes and status; None when it is not a regular file inside the workspace, or too big."""
        head = os.path.dirname(rel)
        inside = self._dirs.get(head)
        if inside is None:
            inside = self._dirs[head] = os.path.join(os.path.realpath(os.path.join(self.ws, head)), "").startswith(
                self._prefix
            )
        if not inside:
            return None
        try:
            fd = os.open(os.path.join(self.ws, rel), OPEN_FLAGS)
        except OSError:
            return None
        with contextlib.closing(os.fdopen(fd, "rb", buffering=0)) as handle:
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_size > self.max_bytes:
                    return None
                data = handle.readall()
            except OSError:
                return None
        return None if len(data) > self.max_bytes else (data, info)


def _walk_python(ws: Path, deadline: Deadline, max_files: int) -> tuple[list[str], bool]:
    """Every regular `.py` file under `ws` outside `SKIP_DIRS` (relative, sorted), and whether the walk finished."""
    found: list[str] = []
    pending = [""]
    while pending:
        if deadline.passed or len(found) >= max_files:
            return sorted(found), False
        rel_dir = pending.pop()
        try:
            with os.scandir(os.path.join(ws, rel_dir)) as entries:
                for entry in entries:
                    rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIP_DIRS and not entry.name.endswith(".egg-info"):
                            pending.append(rel)
                    elif entry.name.endswith(".py") and entry.is_file(follow_symlinks=False):
                        found.append(rel)
        except OSError:
            continue
    return sorted(found), True


def _mark(path: Path) -> tuple[object, ...]:
    """What `path` (a workspace's `.git`) is: its type and inode, and a `.git` file's text (`gitdir: ...`).

    An empty directory counts as absent: git passes over it (it is no repository), and it is what the sandbox
    mounts where a workspace has no `.git` (a read-only placeholder that stays while a warm container lives)."""
    try:
        info = os.lstat(path)
    except OSError:
        return ("absent",)
    if stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(OSError):
            if not os.listdir(path):
                return ("absent",)
    text = (read_small(path, 4096) or b"") if stat.S_ISREG(info.st_mode) else b""
    return (stat.S_IFMT(info.st_mode), info.st_dev, info.st_ino, text)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None
