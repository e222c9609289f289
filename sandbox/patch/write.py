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

What in place gives up: a reader racing the write (or a server killed in the middle of one file's write) can see
that file half written, where a replace shows the old or the new file whole; the patch as a whole was never
atomic against a crash either way.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import sandbox.patch.rewrite as rewrite
from sandbox.errors import PatchError, WriteFailed

_TEMP_PREFIX = ".skillbank-patch-"
_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NAMED_TRIES = 8
#: A full disk or quota while room is made for the rewrites: the patch is refused with nothing changed.
_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
_COUNTER = itertools.count()
_PID = [os.getpid()]
os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


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


def _replace(src: str | Path, dst: str | Path) -> None:
    os.replace(src, dst)


def _unlink(path: Path) -> None:
    path.unlink()


def commit(ops: list[WriteOp], root: Path) -> None:
    """Write and delete as `ops` say, atomically as a whole; raise `WriteFailed` after a full rollback."""
    # A changed file with one link is rewritten in place; new files (and hard links) are staged first.
    rewrites = [op for op in ops if op.data is not None and op.original is not None and op.links == 1]
    rewritten = {id(op) for op in rewrites}
    deletes = [op for op in ops if op.data is None]
    created_dirs: list[Path] = []
    staged: list[tuple[WriteOp, str]] = []
    try:
        _stage_all([op for op in ops if op.data is not None and id(op) not in rewritten], root, staged, created_dirs)
    except _StagingFailed as failed:
        _discard(staged, created_dirs)
        raise failed.refusal() from failed.error
    moved = [op for op in ops if _changed_since_read(op)]
    if moved:
        _discard(staged, created_dirs)
        names = ", ".join(op.path.relative_to(root).as_posix() for op in moved)
        raise ChangedMeanwhile(
            f"apply_patch refused, nothing was written: {names} changed on disk while the patch was being "
            "planned (another writer?). Read the file(s) again and send the patch again."
        )
    grown: list[tuple[WriteOp, int]] = []
    try:
        refused = _reserve_all(rewrites, root, grown)
        _stage_all(refused, root, staged, created_dirs)
    except _StagingFailed as failed:
        for op, size in grown:
            rewrite.shrink_back(op.path, size)
        _discard(staged, created_dirs)
        raise failed.refusal() from failed.error
    staged_instead = {id(op) for op in refused}
    rewrites = [op for op in rewrites if id(op) not in staged_instead]
    done: list[WriteOp] = []
    kept: dict[int, str] = {}
    current: WriteOp | None = None
    try:
        for current in rewrites:
            _write_over(current, done)
        for current, temp in staged:
            if current.original is not None:
                _keep(current, kept)
            _replace(temp, current.path)
            done.append(current)
        for current in deletes:
            _keep(current, kept)
            _unlink(current.path)
            done.append(current)
    except OSError as exc:
        leftovers = _rollback(done, root, kept)
        _drop(kept)
        finished = {id(op) for op in done}
        for op, size in grown:
            if id(op) not in finished:
                rewrite.shrink_back(op.path, size)
        _discard([(op, temp) for op, temp in staged if id(op) not in finished], created_dirs)
        where = current.path.relative_to(root).as_posix() if current is not None else "?"
        if leftovers:
            raise WriteFailed(
                f"apply_patch failed writing {where} ({exc}) and could not restore {', '.join(leftovers)}"
            ) from exc
        raise WriteFailed(f"apply_patch failed writing {where} ({exc}); every file was restored") from exc
    _drop(kept)
    _remove_empty_parents({op.path.parent for op in deletes}, root)


class _StagingFailed(Exception):
    """An OS error before anything was changed: the patch is refused as a whole."""

    def __init__(self, where: str, error: OSError) -> None:
        self.where, self.error = where, error

    def refusal(self) -> WriteFailed:
        return WriteFailed(f"apply_patch could not write {self.where} ({self.error}); nothing was changed")


def _stage_all(ops: list[WriteOp], root: Path, staged: list[tuple[WriteOp, str]], created_dirs: list[Path]) -> None:
    """Stage each op's new content as a temp file beside its target (appended to `staged`), making the missing
    directories above it (appended to `created_dirs`)."""
    known_dirs: set[str] = {os.fspath(root)}  # paths as strings: a Path made per file costs more than its write
    for op in ops:
        try:
            parent = os.path.dirname(op.path)
            if parent not in known_dirs:
                _make_parents(Path(parent), root, created_dirs)
                known_dirs.add(parent)
            staged.append((op, _stage(op.path, op.data or b"", op.mode)))
        except OSError as exc:
            raise _StagingFailed(op.path.relative_to(root).as_posix(), exc) from exc


def _reserve_all(ops: list[WriteOp], root: Path, grown: list[tuple[WriteOp, int]]) -> list[WriteOp]:
    """Give each file to rewrite the room its new content needs (those extended go to `grown`, with their size
    before); returns the ops whose file cannot be rewritten in place (to stage instead)."""
    refused: list[WriteOp] = []
    for op in ops:
        data = op.data or b""
        try:
            before = rewrite.reserve(op.path, _inode(op), len(data))
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


def _write_over(op: WriteOp, done: list[WriteOp]) -> None:
    """Give `op.path` its new content and mode: rewritten in place when it opens for writing as the file that was
    read (appended to `done` before the first byte is written, so a failure midway is undone too), else replaced
    from a temp file."""
    data, mode = op.data or b"", op.mode
    try:
        fd = rewrite.open_to_rewrite(op.path, _inode(op))
    except OSError:
        fd = None
    if fd is None:
        _replace_from_temp(op.path, data, mode)
        done.append(op)
        return
    try:
        done.append(op)
        rewrite.overwrite(fd, data, mode)
    finally:
        os.close(fd)


def _replace_from_temp(path: Path, data: bytes, mode: int | None) -> None:
    temp = _stage(path, data, mode)
    try:
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _changed_since_read(op: WriteOp) -> bool:
    try:
        info = os.lstat(op.path)
    except (FileNotFoundError, NotADirectoryError):
        return op.stamp is not None
    return op.stamp != (info.st_mtime_ns, info.st_size, info.st_ino)


def _make_parents(parent: Path, root: Path, created: list[Path]) -> None:
    """Create the missing directories above a new file, recording each one as soon as it exists."""
    missing: list[Path] = []
    probe = parent
    while probe != root and not probe.exists():
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        directory.mkdir()
        created.append(directory)


def _temp_file(directory: str) -> tuple[int, str]:
    """A new, empty temp file in `directory`, open for writing: named by this process and a counter (`mkstemp`'s
    random names cost 1.5 of the 5.5 ms that staging 262 files takes), never following or reusing what is there
    (a name taken, by a leftover or a planted link, moves on to the next; after a few, `mkstemp` picks one)."""
    for _ in range(_NAMED_TRIES):
        name = os.path.join(directory, f"{_TEMP_PREFIX}{_PID[0]}-{next(_COUNTER)}")
        try:
            return os.open(name, _TEMP_FLAGS, 0o600), name
        except FileExistsError:
            continue
    return tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=directory)


def _stage(path: Path, data: bytes, mode: int | None) -> str:
    """Write `data` to a new temp file beside `path`, with the final permission bits; the temp file's path."""
    fd, name = _temp_file(os.path.dirname(path))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode if mode is not None else 0o644)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    os.close(fd)
    return name


def _discard(staged: list[tuple[WriteOp, str]], created_dirs: list[Path]) -> None:
    for _, temp in staged:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    for directory in reversed(created_dirs):
        with contextlib.suppress(OSError):
            directory.rmdir()


def _keep(op: WriteOp, kept: dict[int, str]) -> None:
    """A hard link to the file `op` replaces or deletes, beside it (in `kept`), to put that very file back if the
    patch fails; none where the file system or its protections refuse one (the bytes are restored then)."""
    directory = os.path.dirname(op.path)
    for _ in range(_NAMED_TRIES):
        name = os.path.join(directory, f"{_TEMP_PREFIX}{_PID[0]}-{next(_COUNTER)}")
        try:
            os.link(op.path, name, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError:
            return
        kept[id(op)] = name
        return


def _drop(kept: dict[int, str]) -> None:
    for name in kept.values():
        with contextlib.suppress(OSError):
            os.unlink(name)
    kept.clear()


def _rollback(done: list[WriteOp], root: Path, kept: dict[int, str]) -> list[str]:
    """Undo the rewritten, replaced and deleted files, newest first (a file `kept` linked is moved back whole);
    return the paths that could not be restored."""
    failed: list[str] = []
    for op in reversed(done):
        backup = kept.pop(id(op), None)
        if backup is not None:
            try:
                os.replace(backup, op.path)
                continue
            except OSError:
                kept[id(op)] = backup  # removed with the others; the bytes are put back instead
        try:
            if op.original is None:
                op.path.unlink(missing_ok=True)
            else:
                _restore(op.path, op.original, op.original_mode)
        except OSError:
            failed.append(op.path.relative_to(root).as_posix())
    return failed


def _restore(path: Path, data: bytes, mode: int | None) -> None:
    """Put `data` back: in place where the file still opens for it, else (or if that fails midway) from a temp file."""
    try:
        fd = rewrite.open_to_rewrite(path, None)
    except OSError:
        fd = None
    if fd is not None:
        try:
            rewrite.overwrite(fd, data, mode)
            return
        except OSError:
            pass
        finally:
            os.close(fd)
    _replace_from_temp(path, data, mode)


def _remove_empty_parents(directories: set[Path], root: Path) -> None:
    """After deletions, remove the directories they left empty (as `git apply` does), never the root."""
    pending = sorted(directories, key=lambda d: len(d.parts), reverse=True)
    seen: set[Path] = set()
    while pending:
        directory = pending.pop(0)
        if directory in seen or directory == root or not directory.is_relative_to(root):
            continue
        seen.add(directory)
        if not _is_empty_dir(directory):
            continue
        with contextlib.suppress(OSError):
            directory.rmdir()
            pending.append(directory.parent)
            pending.sort(key=lambda d: len(d.parts), reverse=True)


def _is_empty_dir(directory: Path) -> bool:
    try:
        with os.scandir(directory) as entries:
            return next(entries, None) is None
    except OSError:
        return False
