"""All-or-nothing writes: stage every new file as a temp file beside its target, then `os.replace` them in.

If any step fails, every file already replaced or deleted is put back from the bytes read while planning, new files
and directories are removed, and the error says so. A failure while staging changes nothing at all.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sandbox.errors import PatchError, WriteFailed

_TEMP_PREFIX = ".skillbank-patch-"
_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NAMED_TRIES = 8
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
    stamp: tuple[int, int] | None = None
    """(mtime in ns, size) of the file when it was read; None when it did not exist."""


class ChangedMeanwhile(PatchError):
    """A target changed on disk after it was read for planning; nothing was written."""


def _replace(src: str | Path, dst: str | Path) -> None:
    os.replace(src, dst)


def _unlink(path: Path) -> None:
    path.unlink()


def commit(ops: list[WriteOp], root: Path) -> None:
    """Write and delete as `ops` say, atomically as a whole; raise `WriteFailed` after a full rollback."""
    writes = [op for op in ops if op.data is not None]
    deletes = [op for op in ops if op.data is None]
    created_dirs: list[Path] = []
    known_dirs: set[str] = {os.fspath(root)}  # paths as strings: a Path made per file costs more than its write
    staged: list[tuple[WriteOp, str]] = []
    for op in writes:
        try:
            parent = os.path.dirname(op.path)
            if parent not in known_dirs:
                _make_parents(Path(parent), root, created_dirs)
                known_dirs.add(parent)
            staged.append((op, _stage(op.path, op.data or b"", op.mode)))
        except OSError as exc:
            _discard(staged, created_dirs)
            where = op.path.relative_to(root).as_posix()
            raise WriteFailed(f"apply_patch could not write {where} ({exc}); nothing was changed") from exc
    moved = [op for op in ops if _changed_since_read(op)]
    if moved:
        _discard(staged, created_dirs)
        names = ", ".join(op.path.relative_to(root).as_posix() for op in moved)
        raise ChangedMeanwhile(
            f"apply_patch refused, nothing was written: {names} changed on disk while the patch was being "
            "planned (another writer?). Read the file(s) again and send the patch again."
        )
    done: list[WriteOp] = []
    current: WriteOp | None = None
    try:
        for current, temp in staged:
            _replace(temp, current.path)
            done.append(current)
        for current in deletes:
            _unlink(current.path)
            done.append(current)
    except OSError as exc:
        leftovers = _rollback(done, root)
        finished = {id(op) for op in done}
        _discard([(op, temp) for op, temp in staged if id(op) not in finished], created_dirs)
        where = current.path.relative_to(root).as_posix() if current is not None else "?"
        if leftovers:
            raise WriteFailed(
                f"apply_patch failed writing {where} ({exc}) and could not restore {', '.join(leftovers)}"
            ) from exc
        raise WriteFailed(f"apply_patch failed writing {where} ({exc}); every file was restored") from exc
    _remove_empty_parents({op.path.parent for op in deletes}, root)


def _changed_since_read(op: WriteOp) -> bool:
    try:
        info = os.lstat(op.path)
    except (FileNotFoundError, NotADirectoryError):
        return op.stamp is not None
    return op.stamp != (info.st_mtime_ns, info.st_size)


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


def _rollback(done: list[WriteOp], root: Path) -> list[str]:
    """Undo the replaced and deleted files, newest first; return the paths that could not be restored."""
    failed: list[str] = []
    for op in reversed(done):
        try:
            if op.original is None:
                op.path.unlink(missing_ok=True)
            else:
                os.replace(_stage(op.path, op.original, op.original_mode), op.path)
        except OSError:
            failed.append(op.path.relative_to(root).as_posix())
    return failed


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
