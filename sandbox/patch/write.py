"""All-or-nothing writes: each file the patch changes is rewritten in place (`rewrite`), each new file is staged as
a temp file beside its target and `os.replace`d in, deletions come last, and every step is undone if a later one
fails.

Order: new files are staged (a failure there changes nothing); every target is checked against what planning
read (another writer's change refuses the patch, nothing written); the files to rewrite get the room they grow by
(a full disk still changes nothing) and those that cannot be rewritten in place (a hard link, a file this process
may not open for writing, a running program, anything planted since planning) are staged too; then files are
rewritten, staged files moved in, and deletions made. If a step fails there, every file already rewritten,
replaced or deleted is put back: a replaced or deleted file as the very file it was (a hard link to it is kept
beside it until the patch is done, so its inode, owner and other names come back), a rewritten one from the bytes
read while planning (in place, keeping its inode; from a temp file if that fails, as for a file no link could be
kept to); new files and directories are removed, and the error says so.

Every file is reached by its name in a directory held open (`sandbox.patch.dirs`: the ones the jail checked, and
those the patch creates), never by path: a directory swapped for a link meanwhile is not followed out of the tree.

What in place gives up: a reader racing the write (or a server killed in the middle of one file's write) can see
that file half written, where a replace shows the old or the new file whole; the patch as a whole was never
atomic against a crash either way.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from pathlib import Path

import sandbox.patch.backup as backup
import sandbox.patch.rewrite as rewrite
from sandbox.errors import PatchError, WriteFailed
from sandbox.patch.dirs import Dirs, Place, TooManyDirectories

#: A full disk or quota while room is made for the rewrites: the patch is refused with nothing changed.
_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


@dataclass
class WriteOp:
    path: Path
    data: bytes | None
    """The new content; None deletes the file."""
    mode: int | None
    """Permission bits of the new content."""
    original: bytes | None
    """The content before the patch; None when the file did not exist."""
    original_mode: int | None
    stamp: tuple[int, int, int] | None = None
    """(mtime in ns, size, inode) of the file when it was read; None when it did not exist."""
    links: int = 0
    """The file's link count when it was read (0: it did not exist); only a file with one is rewritten in place."""


class ChangedMeanwhile(PatchError):
    """A target changed on disk after it was read for planning; nothing was written."""


def _replace(src: Place, dst: Place) -> None:
    os.replace(src.name, dst.name, src_dir_fd=src.dir_fd, dst_dir_fd=dst.dir_fd)


def _unlink(place: Place) -> None:
    os.unlink(place.name, dir_fd=place.dir_fd)


def commit(ops: list[WriteOp], root: Path, dirs: Dirs | None = None) -> None:
    """Write and delete as `ops` say, atomically as a whole; raise `WriteFailed` after a full rollback. `dirs` holds
    the directories the jail checked (the files are written there); without it they are opened from `root`."""
    if dirs is None:
        with Dirs(root) as own:
            return commit(ops, root, own)
    # A changed file with one link is rewritten in place; new files (and hard links) are staged first.
    rewrites = [op for op in ops if op.data is not None and op.original is not None and op.links == 1]
    rewritten = {id(op) for op in rewrites}
    deletes = [op for op in ops if op.data is None]
    created_dirs: list[str] = []
    staged: list[tuple[WriteOp, Place]] = []
    new = [op for op in ops if op.data is not None and id(op) not in rewritten]
    try:
        _stage_all(new, root, staged, created_dirs, dirs)
    except _StagingFailed as failed:
        _discard(staged, created_dirs, dirs)
        raise failed.refusal() from failed.error
    moved = [op for op in ops if _changed_since_read(op, dirs)]
    if moved:
        _discard(staged, created_dirs, dirs)
        names = ", ".join(op.path.relative_to(root).as_posix() for op in moved)
        raise ChangedMeanwhile(
            f"apply_patch refused, nothing was written: {names} changed on disk while the patch was being "
            "planned (another writer?). Read the file(s) again and send the patch again."
        )
    grown: list[tuple[WriteOp, int]] = []
    try:
        refused = _reserve_all(rewrites, root, grown, dirs)
        _stage_all(refused, root, staged, created_dirs, dirs)
    except _StagingFailed as failed:
        for op, size in grown:
            rewrite.shrink_back(dirs.place(op.path), size)
        _discard(staged, created_dirs, dirs)
        raise failed.refusal() from failed.error
    staged_instead = {id(op) for op in refused}
    rewrites = [op for op in rewrites if id(op) not in staged_instead]
    done: list[WriteOp] = []
    kept: dict[int, Place] = {}
    current: WriteOp | None = None
    try:
        for current in rewrites:
            _write_over(current, done, dirs)
        for current, temp in staged:
            target = dirs.place(current.path)
            if current.original is not None:
                backup.keep(target, id(current), kept)
            _replace(temp, target)
            done.append(current)
        for current in deletes:
            target = dirs.place(current.path)
            backup.keep(target, id(current), kept)
            _unlink(target)
            done.append(current)
    except OSError as exc:
        leftovers = backup.rollback(done, root, kept, dirs)
        backup.drop(kept)
        finished = {id(op) for op in done}
        for op, size in grown:
            if id(op) not in finished:
                rewrite.shrink_back(dirs.place(op.path), size)
        _discard([(op, temp) for op, temp in staged if id(op) not in finished], created_dirs, dirs)
        where = current.path.relative_to(root).as_posix() if current is not None else "?"
        if leftovers:
            raise WriteFailed(
                f"apply_patch failed writing {where} ({exc}) and could not restore {', '.join(leftovers)}"
            ) from exc
        raise WriteFailed(f"apply_patch failed writing {where} ({exc}); every file was restored") from exc
    backup.drop(kept)
    _remove_empty_parents({os.path.dirname(op.path) for op in deletes}, os.fspath(root), dirs)
    return None


# Staging errors that mean a directory held open (or about to be opened) changed under the patch.
_DIRECTORY_MOVED = {
    errno.ELOOP: "replaced by a symbolic link",
    errno.ENOENT: "moved or removed",
    errno.ENOTDIR: "replaced by something other than a directory",
}


class _StagingFailed(Exception):
    """An OS error before anything was changed: the patch is refused as a whole."""

    def __init__(self, where: str, error: OSError) -> None:
        self.where, self.error = where, error

    def refusal(self) -> PatchError | WriteFailed:
        if isinstance(self.error, TooManyDirectories):
            return PatchError(
                f"apply_patch refused, nothing was written.\n{self.error.problem}\nHow to fix: {self.error.fix}"
            )
        if self.error.errno in _DIRECTORY_MOVED:
            return ChangedMeanwhile(
                f"apply_patch refused, nothing was written: a directory on the path to {self.where} was "
                f"{_DIRECTORY_MOVED[self.error.errno]} while the patch was being applied (something running in the "
                "workspace?). Check the directory and send the patch again."
            )
        return WriteFailed(f"apply_patch could not write {self.where} ({self.error}); nothing was changed")


def _stage_all(
    ops: list[WriteOp], root: Path, staged: list[tuple[WriteOp, Place]], created_dirs: list[str], dirs: Dirs
) -> None:
    """Stage each op's new content as a temp file beside its target (appended to `staged`), making the missing
    directories above it (appended to `created_dirs`)."""
    known_dirs: set[str] = {os.fspath(root)}  # paths as strings: a Path made per file costs more than its write
    for op in ops:
        try:
            parent = os.path.dirname(op.path)
            if parent not in known_dirs:
                _make_parents(parent, os.fspath(root), created_dirs, dirs)
                known_dirs.add(parent)
            staged.append((op, backup.stage(dirs.place(op.path), op.data or b"", op.mode)))
        except OSError as exc:
            raise _StagingFailed(op.path.relative_to(root).as_posix(), exc) from exc


def _reserve_all(ops: list[WriteOp], root: Path, grown: list[tuple[WriteOp, int]], dirs: Dirs) -> list[WriteOp]:
    """Give each file to rewrite the room its new content needs (those extended go to `grown`, with their size
    before); returns the ops whose file cannot be rewritten in place (to stage instead)."""
    refused: list[WriteOp] = []
    for op in ops:
        data = op.data or b""
        try:
            before = rewrite.reserve(dirs.place(op.path), _inode(op), len(data))
        except OSError as exc:
            if exc.errno not in _DISK_FULL:
                refused.append(op)  # read-only, busy, gone: replaced instead
                continue
            raise _StagingFailed(op.path.relative_to(root).as_posix(), exc) from exc
        if before is None:
            refused.append(op)
        elif len(data) > before:
            grown.append((op, before))
    return refused


def _inode(op: WriteOp) -> int | None:
    return op.stamp[2] if op.stamp is not None else None


def _write_over(op: WriteOp, done: list[WriteOp], dirs: Dirs) -> None:
    """Give `op.path` its new content and mode: rewritten in place when it opens for writing as the file that was
    read (appended to `done` before the first byte is written, so a failure midway is undone too), else replaced
    from a temp file."""
    data, mode, place = op.data or b"", op.mode, dirs.place(op.path)
    try:
        fd = rewrite.open_to_rewrite(place, _inode(op))
    except OSError:
        fd = None
    if fd is None:
        backup.replace_from_temp(place, data, mode)
        done.append(op)
        return
    try:
        done.append(op)
        rewrite.overwrite(fd, data, mode)
    finally:
        os.close(fd)


def _changed_since_read(op: WriteOp, dirs: Dirs) -> bool:
    try:
        place = dirs.place(op.path)
        info = os.stat(place.name, dir_fd=place.dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return op.stamp is not None
    except OSError:  # a link in place of its directory: not the file that was read
        return True
    return op.stamp != (info.st_mtime_ns, info.st_size, info.st_ino)


def _make_parents(parent: str, root: str, created: list[str], dirs: Dirs) -> None:
    """Create the missing directories above a new file, each in the directory held open above it, recording each
    one as soon as it exists."""
    missing: list[str] = []
    probe = parent
    while probe != root:
        try:
            dirs.fd(probe)
            break
        except FileNotFoundError:
            missing.append(probe)
            probe = os.path.dirname(probe)
    for directory in reversed(missing):
        above, name = os.path.split(directory)
        try:
            os.mkdir(name, dir_fd=dirs.fd(above))
        except FileExistsError:
            dirs.fd(directory)  # made meanwhile: used if it is a directory, refused (ELOOP) if it is a link
            continue
        created.append(directory)


def _discard(staged: list[tuple[WriteOp, Place]], created_dirs: list[str], dirs: Dirs) -> None:
    for _, temp in staged:
        with contextlib.suppress(OSError):
            os.unlink(temp.name, dir_fd=temp.dir_fd)
    for directory in reversed(created_dirs):
        with contextlib.suppress(OSError):
            dirs.forget(directory)
            above, name = os.path.split(directory)
            os.rmdir(name, dir_fd=dirs.fd(above))


def _remove_empty_parents(directories: set[str], root: str, dirs: Dirs) -> None:
    """After deletions, remove the directories they left empty (as `git apply` does), never the root; each is
    removed from the directory held open above it (a directory not empty refuses)."""
    prefix = os.path.join(root, "")
    pending = sorted(directories, key=lambda d: d.count(os.sep), reverse=True)
    seen: set[str] = set()
    while pending:
        directory = pending.pop(0)
        if directory in seen or not directory.startswith(prefix):
            continue
        seen.add(directory)
        above, name = os.path.split(directory)
        try:
            os.rmdir(name, dir_fd=dirs.fd(above))
        except OSError:
            continue
        dirs.forget(directory)
        pending.append(above)
        pending.sort(key=lambda d: d.count(os.sep), reverse=True)
