"""Where the host's bound unix sockets are, by inode: so that a bubblewrap sandbox can hide every name of each.

`/proc/net/unix` lists the name a socket was bound to, which is not always where it is: a name bound relative to the
server's working dir, a socket renamed after `bind()` (bound to a temp name, then renamed into place), and a hard
link to it are all reachable at paths not listed there. The kernel's sock_diag interface (`NETLINK_SOCK_DIAG`,
`UDIAG_SHOW_VFS`) gives each bound socket's file-system device and inode instead, so each is looked for by inode in
the dir of its name (a relative name: under the dirs the sandbox shows, then in its server's working dir) and masked
wherever it is found there. A socket with more links than names found is `unlocated`: only its device is known, so
every dir of that file system that the sandbox need not see is hidden (`unlocated_view`). A socket found nowhere is
taken as deleted (it listens on, reachable by no path) rather than moved to another dir, which would take a walk of
the file system to find: see docs/run_tests.md, Known limits.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox.exec.base import path_is_under
from sandbox.exec.view import host_sockets

#: The host dirs a sandbox always needs (programs, libraries, configuration); never hidden.
SYSTEM_DIRS = tuple(Path(p) for p in ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/nix"))

_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST, _NLM_F_DUMP = 0x1, 0x300
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_UDIAG_SHOW_NAME, _UDIAG_SHOW_VFS = 0x1, 0x2
_UNIX_DIAG_NAME, _UNIX_DIAG_VFS = 0, 1
_NETLINK_SOCK_DIAG = 4


@dataclass(frozen=True)
class BoundSocket:
    """A pathname unix socket bound in this network namespace: its name as bound and its file's device and inode
    (`dev` as `st_dev` gives it; `ino` only its low 32 bits, all that sock_diag reports)."""

    name: str
    dev: int
    ino: int
    sock: int = 0
    """The socket's own inode (sockfs), as `/proc/PID/fd` shows it: `socket:[N]`."""


def bound_sockets() -> list[BoundSocket] | None:
    """Every pathname socket bound in this network namespace (from sock_diag); None where the kernel has no
    unix sock_diag (then only `/proc/net/unix`'s names are known)."""
    request = struct.pack("=BBHIIIII", socket.AF_UNIX, 0, 0, 0xFFFFFFFF, 0, _UDIAG_SHOW_NAME | _UDIAG_SHOW_VFS, 0, 0)
    header = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST | _NLM_F_DUMP, 1, 0)
    found: list[BoundSocket] = []
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, _NETLINK_SOCK_DIAG) as sock:
            sock.settimeout(5)
            sock.sendall(header + request)
            while True:
                data = sock.recv(1 << 16)
                for kind, payload in _messages(data):
                    if kind == _NLMSG_DONE:
                        return found
                    if kind == _NLMSG_ERROR:
                        return None
                    if kind == _SOCK_DIAG_BY_FAMILY and (bound := _parse(payload)) is not None:
                        found.append(bound)
                if not data:
                    return None
    except OSError:
        return None


def _messages(data: bytes) -> Iterable[tuple[int, bytes]]:
    offset = 0
    while offset + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, offset)
        if length < 16:
            return
        yield kind, data[offset + 16 : offset + length]
        offset += (length + 3) & ~3


def _parse(payload: bytes) -> BoundSocket | None:
    """A `unix_diag_msg` and its attributes; None for a socket without a file (unnamed, abstract)."""
    offset, name, vfs = 16, "", None
    while offset + 4 <= len(payload):
        length, kind = struct.unpack_from("=HH", payload, offset)
        if length < 4:
            break
        value = payload[offset + 4 : offset + length]
        if kind == _UNIX_DIAG_NAME:
            name = os.fsdecode(value.split(b"\0", 1)[0]) if value[:1] != b"\0" else ""
        elif kind == _UNIX_DIAG_VFS and len(value) >= 8:
            vfs = struct.unpack_from("=II", value)
        offset += (length + 3) & ~3
    if vfs is None or not name:
        return None
    ino, kdev = vfs  # the kernel's own dev_t: major in the top 12 bits, minor in the low 20
    sock = struct.unpack_from("=I", payload, 4)[0]  # `unix_diag_msg.udiag_ino`
    return BoundSocket(name, os.makedev(kdev >> 20, kdev & 0xFFFFF), ino, sock)


def locate(
    sockets: Sequence[BoundSocket], bases: Sequence[Path], skip: Sequence[Path] = ()
) -> tuple[list[Path], set[int]]:
    """The paths where `sockets` were found, and the devices of those with a name not found (hard-linked).

    An absolute name is looked up in its dir, a relative one under each of `bases` (the dirs the sandbox shows: a
    server started in the workspace) and, failing that, in its server's working dir. In a dir looked in, every
    socket with the inode is found (a rename or a link within the dir, the usual ones: a socket bound to a temp name,
    then renamed into place), and so is a socket at the listed name whatever its inode (masking one too many costs
    nothing). What is not found is taken as gone: a socket whose file was deleted while it listens (a test's
    teardown, a temp cleaner: common) is reachable by no path. So only a socket with more links than names found
    leaves a device `unlocated`. Names under `skip` (hidden from the sandbox anyway) are not looked up, unless they
    are under one of `bases` too (shown again on top)."""
    found: set[Path] = set()
    unlocated: set[int] = set()
    listings: dict[Path, list[tuple[Path, os.stat_result]]] = {}
    owners: dict[int, Path] | None = None
    for bound in sockets:
        name = Path(bound.name)
        if name.is_absolute():
            if _unseen(name, bases, skip):
                continue
            paths, links = _found_in(name.parent, name, bound, listings)
        else:
            paths, links = _found_under(bases, name, bound)
            if not paths:
                if owners is None:
                    relative = {b.sock for b in sockets if not os.path.isabs(b.name)}
                    owners = _working_dirs(relative)
                cwd = owners.get(bound.sock)
                if cwd is not None and not _unseen(cwd / name, bases, skip):
                    paths, links = _found_in((cwd / name).parent, cwd / name, bound, listings)
        found.update(paths)
        if links > len({os.path.realpath(p) for p in paths}):
            unlocated.add(bound.dev)
    return sorted(found), unlocated


def _unseen(path: Path, shown: Sequence[Path], hidden: Sequence[Path]) -> bool:
    """Under a hidden dir (/tmp, /run) and not under a dir shown again on top (a workspace in /tmp)."""
    return path_is_under(path, hidden) and not path_is_under(path, shown)


def _same_file(info: os.stat_result, bound: BoundSocket) -> bool:
    return stat.S_ISSOCK(info.st_mode) and (info.st_dev, info.st_ino & 0xFFFFFFFF) == (bound.dev, bound.ino)


def _found_in(
    directory: Path, name: Path, bound: BoundSocket, listings: dict[Path, list[tuple[Path, os.stat_result]]]
) -> tuple[list[Path], int]:
    """The sockets of `directory` that are `bound` (and `name` when it is a socket), and `bound`'s link count (0
    when none is it). Each dir is listed once (`listings`); one this uid cannot list is one the tests cannot."""
    listing = listings.get(directory)
    if listing is None:
        listing = []
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISSOCK(info.st_mode):
                        listing.append((Path(entry.path), info))
        listings[directory] = listing
    paths = [path for path, info in listing if path == name or _same_file(info, bound)]
    links = max((info.st_nlink for _, info in listing if _same_file(info, bound)), default=0)
    return paths, links


def _found_under(bases: Sequence[Path], name: Path, bound: BoundSocket) -> tuple[list[Path], int]:
    """Where the relative `name` under one of `bases` is `bound`, and its link count."""
    paths, links = [], 0
    for path in (base / name for base in bases):
        with contextlib.suppress(OSError):
            info = path.lstat()
            if _same_file(info, bound):
                paths.append(path)
                links = info.st_nlink
    return paths, links


def _working_dirs(socks: set[int]) -> dict[int, Path]:
    """The working dir of a process holding each socket (by its sockfs inode): where a name bound relative to it
    most likely is. Looked for in /proc only when a relative name was not found elsewhere."""
    wanted = {f"socket:[{sock}]": sock for sock in socks}
    found: dict[int, Path] = {}
    with contextlib.suppress(OSError), os.scandir("/proc") as procs:
        for proc in procs:
            if not proc.name.isdigit():
                continue
            with contextlib.suppress(OSError), os.scandir(f"/proc/{proc.name}/fd") as fds:
                for fd in fds:
                    sock = wanted.get(os.readlink(fd.path)) if fd.name.isdigit() else None
                    if sock is not None and sock not in found:
                        with contextlib.suppress(OSError):
                            found[sock] = Path(os.readlink(f"/proc/{proc.name}/cwd"))
            if len(found) == len(wanted):
                break
    return found


def unlocated_view(devices: set[int], needed: Sequence[Path], skip: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """What to hide so that no name of a socket on `devices` stays visible except inside the `needed` dirs: the
    dirs to cover with an empty tmpfs, and the socket files to mask in the dirs above a needed one.

    On each mount of those devices (not under `skip`, which the sandbox hides already), a dir that holds no needed
    path is hidden whole; one above a needed path is kept and its entries looked at in turn. Only the dirs on the
    way to a needed path are listed, never a whole tree."""
    keep = [str(p) for p in needed]
    leave = [str(p) for p in skip]
    above = {str(parent) for path in needed for parent in path.parents}
    mounts = _mounts()
    hide: list[Path] = []
    masks: list[Path] = []
    for top in sorted(str(path) for path, dev in mounts.items() if dev in devices):
        todo = [top]
        while todo:
            here = todo.pop()
            if _under(here, leave) or _under(here, keep):
                continue
            if here not in above:
                if here != "/":
                    hide.append(Path(here))
                continue
            with contextlib.suppress(OSError), os.scandir(here) as entries:
                for entry in entries:
                    if Path(entry.path) in mounts:
                        continue  # another file system: its own device decides
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
                    elif not entry.is_file(follow_symlinks=False) and stat.S_ISSOCK(
                        entry.stat(follow_symlinks=False).st_mode
                    ):
                        masks.append(Path(entry.path))
    return sorted(hide), sorted(masks)


def _under(path: str, roots: Sequence[str]) -> bool:
    """`path_is_under` on strings, which is what a walk that lists whole dirs can afford."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _mounts() -> dict[Path, int]:
    """Each mount point in this mount namespace and the device of the file system mounted there (the last one)."""
    mounts: dict[Path, int] = {}
    with contextlib.suppress(OSError), open("/proc/self/mountinfo", "rb") as lines:
        for line in lines:
            fields = line.split(b" ", 5)
            if len(fields) < 5 or b":" not in fields[2]:
                continue
            major, minor = fields[2].split(b":", 1)
            point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), fields[4])  # `\040` is a space
            mounts[Path(os.fsdecode(point))] = os.makedev(int(major), int(minor))
    return mounts


def socket_view(needed: Sequence[Path], skip: Sequence[Path]) -> tuple[list[Path], list[Path], bool]:
    """For a sandbox that shows the host's tree except `skip`: the dirs to hide, the host sockets to mask, and
    whether the sockets were found by inode (sock_diag) rather than only by their listed names."""
    bound = bound_sockets()
    if bound is None:
        return [], host_sockets(), False
    sockets, unlocated = locate(bound, needed, skip)
    hide, more = unlocated_view(unlocated, needed, skip) if unlocated else ([], [])
    return hide, sorted({*sockets, *more}), True
