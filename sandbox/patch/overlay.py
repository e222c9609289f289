"""The workspace as the patch sees it while it is planned: files read once from disk, then changed in memory."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from sandbox.patch.dirs import Place
from sandbox.patch.jail import Jail, PathRefused, normalize, regular_file
from sandbox.patch.ops import PathChoice
from sandbox.patch.textfile import BinaryContent, TextFile
from sandbox.patch.write import WriteOp

DEFAULT_MODE = 0o644


@dataclass
class Entry:
    rel: str
    path: Path
    disk_bytes: bytes | None
    disk_mode: int | None
    disk_stamp: tuple[int, int, int] | None
    """(mtime in ns, size, inode) when the file was read, to notice a change made by someone else before writing."""
    disk_links: int
    """Its link count then (0: absent); only a file with one is rewritten in place (`write`)."""
    text: TextFile | None
    """The planned content; None when the file is (or will be) absent."""
    mode: int | None
    original: TextFile | None = None
    """The content on disk before the patch (what a git rename or copy reads, whatever sections before it did)."""
    binary: bool = False
    touched: bool = False
    changed: list[tuple[int, int]] | None = None
    """Line ranges of `text` that the patch wrote, for the syntax check; None: all of it (new or reworked twice)."""
    encoded: tuple[TextFile, bytes] | None = None
    """`text` and its bytes, once encoded (the syntax check and the write need the same bytes)."""
    first: int = 0
    """The section that first looked the file up: the plan lists files in that order, whatever order it ran in."""
    python: bool = False
    """Whether that section named a `.py` file (see `Overlay.python`)."""
    filled: bool = False
    """A git rename or copy moved content here while the file on disk was still in place: `text` is that content,
    `original` the file's own, which a later rename must move away (`vacated`) or the patch is refused."""
    vacated: bool = False
    """A git rename moved the file's content before the patch (`original`) away."""

    def record(self, text: TextFile | None, changed: list[tuple[int, int]]) -> None:
        """The planned content after one section; a second section over the same file voids the line ranges."""
        self.changed = None if self.touched else list(changed)
        self.text = text
        self.touched = True

    @property
    def exists(self) -> bool:
        return self.text is not None or self.binary

    def encode(self) -> bytes:
        """The planned text's bytes (encoded once per planned text)."""
        assert self.text is not None
        if self.encoded is None or self.encoded[0] is not self.text:
            self.encoded = (self.text, self.text.encode())
        return self.encoded[1]

    def write_op(self) -> WriteOp | None:
        """What to do on disk to reach the planned state; None when nothing changes."""
        if not self.touched or self.binary:
            return None
        if self.text is None:
            if self.disk_bytes is None:
                return None
            return WriteOp(self.path, None, None, self.disk_bytes, self.disk_mode, self.disk_stamp)
        data = self.encode()
        if data == self.disk_bytes and self.mode == self.disk_mode:
            return None
        return WriteOp(self.path, data, self.mode, self.disk_bytes, self.disk_mode, self.disk_stamp, self.disk_links)


class Overlay:
    def __init__(self, jail: Jail) -> None:
        self.jail = jail
        self.entries: dict[Path, Entry] = {}
        self.section = 0
        """The section being planned (its position in the patch)."""
        self.python = False
        """Whether the section being planned names a `.py` file."""
        self.mixed = False
        """A file was looked up by sections of both kinds (planned out of order, the plan could differ)."""
        self._created: set[str] = set()
        """The files the patch creates (added, or the targets of renames and copies)."""
        self._created_dirs: dict[str, str] = {}
        """The directories above them, each with one of the files below it."""

    def entry(self, rel: str) -> Entry:
        path, status = self.jail.lookup(rel)
        found = self.entries.get(path)
        if found is not None:
            self.mixed = self.mixed or found.python is not self.python
            return found
        info = regular_file(rel, status)
        mode = stat.S_IMODE(info.st_mode) if info is not None else None
        try:
            data = _read(self.jail.place(path), info.st_size) if info is not None else None
        except OSError as exc:
            raise PathRefused(rel, f"the file cannot be read ({exc.strerror})", "check its permissions") from exc
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino) if info is not None else None
        links = info.st_nlink if info is not None else 0
        text: TextFile | None = None
        binary = False
        if data is not None:
            try:
                text = TextFile.decode(data)
            except BinaryContent:
                binary = True
        created = Entry(
            rel, path, data, mode, stamp, links, text, mode, text, binary, first=self.section, python=self.python
        )
        self.entries[path] = created
        return created

    def existing(self, choice: PathChoice) -> Entry | None:
        """The first reading of the path that names an existing file (None when none does)."""
        for rel in _readings(choice):
            found = self.entry(rel)
            if found.exists:
                return found
        return None

    def preimage(self, choice: PathChoice) -> Entry | None:
        """The first reading of the path that names a file on disk before the patch, even one that an earlier
        section deleted or renamed away (None when none does)."""
        for rel in _readings(choice):
            found = self.entry(rel)
            if found.disk_bytes is not None:
                return found
        return None

    def new(self, choice: PathChoice) -> Entry:
        """The preferred reading of a path the patch creates."""
        return self.entry(_readings(choice)[0])

    def created(self, rel: str) -> None:
        """Note that the patch creates `rel` (see `created_clash`)."""
        self._created.add(rel)
        parent = rel.rpartition("/")[0]
        while parent and parent not in self._created_dirs:
            self._created_dirs[parent] = rel
            parent = parent.rpartition("/")[0]

    def created_clash(self, rel: str) -> str | None:
        """A file the patch creates that lies above `rel` or below it, if there is one."""
        if rel in self._created_dirs:
            return self._created_dirs[rel]
        parent = rel.rpartition("/")[0]
        while parent:
            if parent in self._created:
                return parent
            parent = parent.rpartition("/")[0]
        return None

    def changed(self) -> list[Entry]:
        """The files the patch touches, in the order the patch first names them."""
        return sorted((e for e in self.entries.values() if e.touched), key=lambda e: e.first)


_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY


def _read(place: Place, size: int) -> bytes:
    """The file's bytes, read to its end (`size`, from its `lstat`, is only a hint: it may have grown since); never
    through a link, a FIFO or a device put in the file's place since it was checked."""
    fd = os.open(place.name, _READ_FLAGS, dir_fd=place.dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "it is no longer a regular file", place.name)
        chunks = [os.read(fd, size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 20))
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) <= 2 else b"".join(chunks)


def _readings(choice: PathChoice) -> list[str]:
    normalize(choice.written)  # the path as written must be safe, whatever prefix is stripped later
    out: list[str] = []
    for candidate in choice.candidates:
        if not candidate.strip("/."):
            continue
        try:
            rel = normalize(candidate)
        except PathRefused as exc:  # `+++ b//etc/x` is /etc/x once `b/` is dropped: refused, never read as b/etc/x
            raise PathRefused(
                choice.written, f"read without its a/ or b/ prefix it is {candidate!r}: {exc.problem}", exc.fix
            ) from exc
        if rel not in out:
            out.append(rel)
    if not out:
        raise PathRefused(choice.written, "the path names no file", "use a path relative to the workspace root")
    return out
