"""What of the host a bubblewrap sandbox must not see although the host is bound read-only: sockets and `.git`.

A read-only mount stops writes, not `connect()`: a unix-domain socket anywhere in the host's tree (Docker's
`/var/run/docker.sock`, the D-Bus buses, a local PostgreSQL) would reach a host service from a sandbox that has no
network. So the runtime dirs (`/run`, `/var/run`, `XDG_RUNTIME_DIR`) get an empty tmpfs, and every other
pathname socket bound on the host gets `/dev/null` bound over it (found by inode: `sandbox.exec.unix_sockets`).

The host runs git over the workspace's `.git` after a run (the syntax reward), so the tests must not be able to
plant a filter or a hook there, nor create or redirect `.git`: whatever `.git` is, it is mounted read-only, and
where there is none an empty read-only tmpfs takes its place. bubblewrap makes that mount point on the host; the
last run that used it removes it again (`git_guard`). The git dirs outside the workspace that git in it needs (a
worktree's, the enclosing repo's of a subdir) are shown read-only where HOME, /tmp or /run would hide them
(`git_dirs_outside`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from sandbox.exec.base import path_is_under

#: Most host sockets masked one by one; beyond this the run says that some stayed visible.
MAX_SOCKET_MASKS = 1024
_RUNTIME_DIRS = (Path("/run"), Path("/var/run"))


def runtime_dirs(env: dict[str, str] | os._Environ[str] = os.environ) -> list[Path]:
    """The host's runtime-state dirs that exist as real dirs: /run, /var/run (unless a link to /run) and the
    user's XDG_RUNTIME_DIR (when it lies elsewhere)."""
    found: list[Path] = []
    xdg = env.get("XDG_RUNTIME_DIR", "")
    candidates = [*_RUNTIME_DIRS, *([Path(xdg)] if xdg.startswith("/") else [])]
    for path in candidates:
        if path.is_symlink() or not path.is_dir() or path == Path("/"):
            continue
        if not path_is_under(path.resolve(), found):
            found.append(path.resolve())
    return found


def runtime_args(dirs: Sequence[Path]) -> list[str]:
    """Empty tmpfs mounts over `dirs`, with the links directly inside them made again (`/run/shm -> /dev/shm`, a
    NixOS `/run/current-system`): those point elsewhere and hold no socket themselves."""
    args: list[str] = []
    for path in dirs:
        args += ["--tmpfs", str(path)]
        with contextlib.suppress(OSError):
            for entry in sorted(path.iterdir()):
                if entry.is_symlink():
                    args += ["--symlink", os.readlink(entry), str(entry)]
    return args


def host_sockets(net_unix: Path = Path("/proc/net/unix")) -> list[Path]:
    """Paths of the unix-domain sockets bound in this network namespace that are sockets at that path here, by the
    names `/proc/net/unix` lists (only where the kernel has no unix sock_diag: see `sandbox.exec.unix_sockets`)."""
    try:
        lines = net_unix.read_text(errors="replace").splitlines()[1:]
    except OSError:
        return []
    found: set[Path] = set()
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed, or abstract (`@...`: cut by the network namespace)
        path = Path(fields[7])
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(path.lstat().st_mode):
                found.add(path)
    return sorted(found)


def socket_masks(
    sockets: Sequence[Path], *, covered: Sequence[Path], shown: Sequence[Path], unseen: Sequence[Path]
) -> tuple[list[str], int]:
    """`/dev/null` bound over each socket the sandbox would see, and how many were left out (over the cap).

    A socket under a `covered` path (an empty tmpfs) is not seen unless it is under one of the `shown` paths
    bound again on top (an interpreter dir, the workspace); one under an `unseen` path never is.
    """
    visible = [
        s
        for s in sockets
        if not path_is_under(s, unseen) and (not path_is_under(s, covered) or path_is_under(s, shown))
    ]
    args = [arg for s in visible[:MAX_SOCKET_MASKS] for arg in ("--ro-bind", "/dev/null", str(s))]
    return args, max(len(visible) - MAX_SOCKET_MASKS, 0)


def git_args(workspace: Path) -> list[str]:
    """bwrap args that leave the workspace's `.git` read-only whatever it is (dir, `gitdir:` file, link, none)."""
    git = workspace / ".git"
    if needs_placeholder(git):
        return ["--perms", "0555", "--tmpfs", str(git), "--remount-ro", str(git)]
    if not os.path.lexists(git):
        return []
    args: list[str] = []
    if not git.is_symlink():
        args += ["--ro-bind", str(git), str(git)]
    args += [arg for path in git_dirs_inside(workspace) for arg in ("--ro-bind", str(path), str(path))]
    return args


def git_dirs_inside(workspace: Path) -> list[Path]:
    """The repo dirs that `<workspace>/.git` leads to (a link's target, a `gitdir:` file's dir and its
    `commondir`) where they lie inside the workspace: the tests could rewrite them otherwise."""
    root = workspace.resolve()
    return [t for t in _git_targets(workspace) if t.is_dir() and t != root and t.is_relative_to(root)]


def git_dirs_outside(workspace: Path) -> list[Path]:
    """The git dirs outside the workspace that git in it uses, to be shown read-only where the sandbox hides their
    place (HOME, /tmp, /run): a worktree's gitdir and its `commondir`, a submodule's, a linked `.git`'s, or, for a
    workspace without its own `.git` (a subdir of a repo), the enclosing repo's. Only dirs that look like a git dir,
    and never the repo of HOME itself or of a dir above it (dotfiles: that would show HOME's tracked files)."""
    root = workspace.resolve()
    git = workspace / ".git"
    targets = _git_targets(workspace) if os.path.lexists(git) and not needs_placeholder(git) else []
    if not os.path.lexists(git) or needs_placeholder(git):
        for parent in root.parents:
            if os.path.lexists(parent / ".git"):
                targets = [(parent / ".git").resolve()] if (parent / ".git").is_dir() else _git_targets(parent)
                break
    return [t for t in targets if not t.is_relative_to(root) and _is_git_dir(t) and not _home_repo(t)]


def _git_targets(where: Path) -> list[Path]:
    """The resolved dirs `<where>/.git` leads to when it is a link or a `gitdir:` file (with its `commondir`)."""
    git = where / ".git"
    targets: list[Path] = []
    if git.is_symlink():
        targets.append(git.resolve())
    elif git.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            first = git.read_text().splitlines()[0] if git.stat().st_size < 4096 else ""
            if first.startswith("gitdir:"):
                gitdir = (where / first.removeprefix("gitdir:").strip()).resolve()
                targets.append(gitdir)
                common = gitdir / "commondir"
                if common.is_file() and common.stat().st_size < 4096:
                    targets.append((gitdir / common.read_text().strip()).resolve())
    return list(dict.fromkeys(targets))


def _is_git_dir(path: Path) -> bool:
    return (
        path.is_dir() and (path / "HEAD").is_file() and ((path / "objects").is_dir() or (path / "commondir").is_file())
    )


def _home_repo(path: Path) -> bool:
    """`/`, HOME or above it, or inside the `.git` of one of those (a dotfiles repo's objects are HOME's files)."""
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError):
        return path == Path("/")
    above = [home, *home.parents]
    return path in above or path_is_under(path, [a / ".git" for a in above])


def needs_placeholder(git: Path) -> bool:
    """No `.git`, or an empty real dir (the mount point a run before left or is using): an empty read-only
    mount goes there. Not in a workspace we cannot write to: the tests cannot create one there either, and
    the mount point could not be made."""
    if not os.path.lexists(git):
        return os.access(git.parent, os.W_OK)
    if git.is_symlink() or not git.is_dir():
        return False
    with contextlib.suppress(OSError):
        return not any(git.iterdir())
    return False


@contextlib.contextmanager
def git_guard(workspace: Path, lock_dir: Path) -> Iterator[list[str]]:
    """`git_args` for one run; afterwards an empty `.git` mount point that a run made is removed by the last
    run using it (a shared lock per workspace in `lock_dir`, so a concurrent run's mount is never torn off)."""
    sweep_git_locks(lock_dir)
    lock = _git_lock(workspace, lock_dir)
    marker = lock.with_suffix(".placeholder")
    git = workspace / ".git"
    fd = _flock(lock, fcntl.LOCK_SH)
    ours = False
    try:
        ours = needs_placeholder(git) and (not os.path.lexists(git) or marker.exists())
        if ours:
            marker.touch()
        yield git_args(workspace)
    finally:
        with contextlib.suppress(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the last run on this workspace: tidy up
            if ours:
                with contextlib.suppress(OSError):
                    if not git.is_symlink() and git.is_dir() and not any(git.iterdir()):
                        git.rmdir()
                marker.unlink(missing_ok=True)
            lock.unlink(missing_ok=True)
        os.close(fd)


def remove_placeholder(workspace: Path, lock_dir: Path) -> bool:
    """Remove an empty `<workspace>/.git` mount point (a Docker container's) unless a local run is using it."""
    lock = _git_lock(workspace, lock_dir)
    fd = _flock(lock, fcntl.LOCK_SH)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        git = workspace / ".git"
        if git.is_symlink() or not git.is_dir() or any(git.iterdir()):
            return False
        git.rmdir()
        return True
    except OSError:
        return False
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)


def sweep_git_locks(lock_dir: Path) -> int:
    """Remove the lock files that no run holds (a server killed mid-run leaves its own); returns how many.

    A marker stays: it says that an empty `.git` left in its workspace is a mount point, removed by the next run
    there."""
    removed = 0
    for lock in lock_dir.glob("git-*.lock"):
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held, current = os.fstat(fd), os.stat(lock)
            if (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
                lock.unlink()
                removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def _git_lock(workspace: Path, lock_dir: Path) -> Path:
    return lock_dir / f"git-{hashlib.sha256(str(workspace).encode()).hexdigest()[:16]}.lock"


def _flock(path: Path, operation: int) -> int:
    """An fd of `path` locked with `operation`, retried when the file was removed (by the last holder) meanwhile,
    so that every holder locks the same file."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, operation)
        with contextlib.suppress(FileNotFoundError):
            held, current = os.fstat(fd), os.stat(path)
            if (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
                return fd
        os.close(fd)
