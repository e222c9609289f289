"""The workspace jail: every path a patch names must stay inside the root, outside `.git/` and the hidden paths (the
skillbank data dir, when it lies inside the workspace), and not be a link. What it checked is then read and written
through the directories it opened (`sandbox.patch.dirs`), never by path again."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from sandbox.errors import PatchError, WorkspaceUnavailable
from sandbox.patch.dirs import Dirs, Place, TooManyDirectories

_DRIVE_RE = re.compile(r"^[A-Za-z]:")


class PathRefused(PatchError):
    """A path in the patch is not allowed; the message says which and why."""

    def __init__(self, path: str, problem: str, fix: str) -> None:
        self.path, self.problem, self.fix = path, problem, fix
        super().__init__(f"apply_patch refused, nothing was written.\n{path!r}: {problem}\nHow to fix: {fix}")


_SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__"})
_SAME_NAME_ENTRIES = 50_000
"""How many directory entries `Jail.same_name` reads at most (~0.1 s)."""

_RELATIVE = "use a path relative to the workspace root, such as src/module.py"


#: A path `normalize` returns as it is: relative, no empty, `.` or `..` part, no NUL, backslash, drive or `~`.
_PLAIN = re.compile(r"(?![A-Za-z]:|~)(?!\.\.?(?:/|\Z))[^/\x00\\]+(?:/(?!\.\.?(?:/|\Z))[^/\x00\\]+)*")


def normalize(path: str) -> str:
    """Check a path as written in the patch and return it as `dir/name`, or raise `PathRefused`."""
    if _PLAIN.fullmatch(path) and ".git" not in path.casefold():  # the usual path, checked in one pass
        return path
    return _normalize(path)


def _normalize(path: str) -> str:
    if "\x00" in path:
        raise PathRefused(path, "the path contains a NUL byte", _RELATIVE)
    if "\\" in path:
        raise PathRefused(path, "the path contains a backslash", "separate directories with '/'")
    if path.startswith("~"):
        raise PathRefused(path, "a path from a home directory ('~') is refused", _RELATIVE)
    if path.startswith("/") or _DRIVE_RE.match(path):
        raise PathRefused(path, "absolute paths are refused", _RELATIVE)
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts:
        raise PathRefused(path, "the path names no file", _RELATIVE)
    if ".." in parts:
        raise PathRefused(path, "'..' is refused: paths must stay inside the workspace", _RELATIVE)
    if any(part.casefold() == ".git" for part in parts):
        raise PathRefused(path, "files under .git/ cannot be patched", "patch the working tree's files only")
    return "/".join(parts)


class Jail:
    """Resolves relative paths under a workspace root and refuses every way out of it, and into a `hidden` path
    (the skillbank data dir: run_tests hides it from the tests, and a file written there can break the skill bank)."""

    def __init__(self, root: Path, hidden: Sequence[Path] = ()) -> None:
        try:
            self.root = root.resolve(strict=True)
        except OSError as exc:
            raise WorkspaceUnavailable(
                f"the workspace {root} does not exist ({exc.strerror}); restart the server in it"
            ) from exc
        if not self.root.is_dir():
            raise WorkspaceUnavailable(f"the workspace {root} is not a directory; restart the server in a repository")
        self._root = str(self.root)
        self._prefix = os.path.join(self._root, "")
        self._hidden = [
            (real.casefold(), os.path.join(real, "").casefold(), Path(real).relative_to(self.root).as_posix())
            for real in (os.path.realpath(path) for path in hidden)
            if real.startswith(self._prefix)
        ]
        """The hidden paths strictly inside the root (real, with a trailing separator, as shown), case-folded for
        case-insensitive file systems. One outside the root cannot be named through the jail anyway; one that is
        the root or above it is not checked (the workspace would be all data dir)."""
        self._parents: dict[str, str] = {"": self._root}
        """Each directory's real path, resolved once per patch: a release diff names ~10 files per directory, and
        `realpath` costs a `lstat` per component. The files themselves are checked every time."""
        self.dirs = Dirs(self._root)
        """The directories the patch reads and writes in, opened as they are checked; closed by `close`."""

    def close(self) -> None:
        self.dirs.close()

    def same_name(self, written: str, limit: int = 5) -> list[str]:
        """The workspace's regular files named as the last part of `written` (a path that names no file), those
        sharing most of its directories first; for a refusal only. The walk follows no link, skips `.git/`, the
        hidden paths, dependency and cache folders (`node_modules`, `__pycache__`, dot folders the path does not
        name), and stops after `_SAME_NAME_ENTRIES` entries."""
        parts = [part for part in written.split("/") if part not in ("", ".")]
        if not parts:
            return []
        name, folders = parts[-1], set(parts[:-1])
        hidden = {real for real, _, _ in self._hidden}
        found: list[str] = []
        seen = 0
        for top, dirnames, filenames in os.walk(self._root):
            seen += len(dirnames) + len(filenames)
            dirnames[:] = [
                d
                for d in dirnames
                if d.casefold() != ".git"
                and d not in _SKIPPED_FOLDERS
                and (not d.startswith(".") or d in folders)
                and os.path.join(top, d).casefold() not in hidden
            ]
            if name in filenames and _is_regular(os.path.join(top, name)):
                found.append(os.path.relpath(os.path.join(top, name), self._root).replace(os.sep, "/"))
            if seen > _SAME_NAME_ENTRIES:
                break

        def likeness(rel: str) -> tuple[int, int, str]:
            theirs = rel.split("/")
            shared = 0
            while shared < min(len(theirs), len(parts)) and theirs[-1 - shared] == parts[-1 - shared]:
                shared += 1
            return (-shared, -len(folders.intersection(theirs[:-1])), rel)

        return sorted(found, key=likeness)[:limit]

    def place(self, path: Path | str) -> Place:
        """Where the checked file at `path` (from `lookup`) is read and written."""
        return self.dirs.place(path)

    def resolve(self, rel: str) -> Path:
        """The real location of the already normalised `rel`; its parents may be links that stay inside the root."""
        return self.lookup(rel)[0]

    def lookup(self, rel: str) -> tuple[Path, os.stat_result | OSError | None]:
        """`resolve`, and what `lstat` said of the file: its status, None when nothing is there, or the error (one
        `lstat` for the link check and the caller's)."""
        head, _, name = rel.rpartition("/")
        parent = self._parents.get(head)
        if parent is None:
            try:
                parent = self._real(head)
            except (OSError, ValueError) as exc:
                raise PathRefused(rel, f"the path cannot be resolved ({exc})", _RELATIVE) from exc
        if parent != self._root and not parent.startswith(self._prefix):
            raise PathRefused(
                rel, "the path leads outside the workspace through a symbolic link", "patch files inside the workspace"
            )
        inside = parent[len(self._prefix) :].split(os.sep) if parent != self._root else []
        if any(part.casefold() == ".git" for part in inside):
            raise PathRefused(rel, "the path leads into .git/ through a symbolic link", "patch working-tree files")
        final = os.path.join(parent, name)
        if self._hidden:
            self._check_hidden(rel, final)
        info: os.stat_result | OSError | None
        try:
            info = os.stat(name, dir_fd=self.dirs.fd(parent), follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            info = None
        except TooManyDirectories as exc:
            raise PathRefused(rel, exc.problem, exc.fix) from exc
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathRefused(
                    rel, f"{exc.strerror} since it was checked", "send the patch again once nothing moves it"
                ) from exc
            info = exc
        if isinstance(info, os.stat_result) and stat.S_ISLNK(info.st_mode):
            real = Path(os.path.realpath(final))
            inside_root = real.is_relative_to(self.root)
            shown = real.relative_to(self.root).as_posix() if inside_root else "outside the workspace"
            raise PathRefused(rel, f"the path is a symbolic link (to {shown})", "patch the file the link points to")
        return Path(final), info

    def _check_hidden(self, rel: str, final: str) -> None:
        folded = final.casefold()
        for real, prefix, shown in self._hidden:
            if folded == real or folded.startswith(prefix):
                raise PathRefused(
                    rel,
                    f"the path lies inside the skillbank data dir ({shown}/), which no tool may change",
                    "patch the project's own files only",
                )

    def _real(self, head: str) -> str:
        """The real path of the directory `head` (relative), remembered: its parent's real path and its name, unless
        the name is a link (`os.path.realpath` in one `lstat` per directory, not one per component of the path)."""
        found = self._parents.get(head)
        if found is not None:
            return found
        up, _, name = head.rpartition("/")
        joined = os.path.join(self._real(up), name)
        try:
            link = stat.S_ISLNK(os.lstat(joined).st_mode)
        except OSError:  # what realpath does with a component it cannot examine: keep it as it is
            link = False
        real = self._parents[head] = os.path.realpath(joined) if link else joined
        return real

    def display(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:  # gone meanwhile
        return False


def regular_file(rel: str, info: os.stat_result | OSError | None) -> os.stat_result | None:
    """The status of a regular file from its `lstat` (`Jail.lookup`); None when nothing is there. Refuses
    directories and special files."""
    if info is None:
        return None
    if isinstance(info, OSError):
        raise PathRefused(
            rel, f"the file cannot be examined ({info.strerror})", "choose a shorter or valid path"
        ) from info
    if stat.S_ISDIR(info.st_mode):
        raise PathRefused(rel, "this is a directory, not a file", "name a file")
    if not stat.S_ISREG(info.st_mode):
        raise PathRefused(rel, "this is not a regular file", "patch regular text files only")
    return info


def check_creatable(jail: Jail, path: Path, rel: str) -> None:
    """A new file's nearest existing ancestor must be a directory inside the root."""
    ancestor = path.parent
    try:
        while not ancestor.exists():
            if ancestor.is_symlink():
                raise PathRefused(rel, "a directory on the path is a dangling symbolic link", "create real directories")
            ancestor = ancestor.parent
    except OSError as exc:
        raise PathRefused(
            rel, f"the path cannot be created ({exc.strerror})", "choose a shorter or valid path"
        ) from exc
    if not ancestor.is_dir():
        raise PathRefused(rel, f"{jail.display(ancestor)} is a file, not a directory", "choose another path")
