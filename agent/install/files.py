"""Config files edited in place, safely: read, change in memory, back up, write atomically, report what changed.

An install's files are written all or none (`save_all`). A config is read as UTF-8 (else refused) and keeps a BOM it
has; a file without any write permission is refused, not replaced.

A file that does not change is not written (so installing twice is a no-op). A file is written where it lives: a
symlinked config (a dotfiles repo) is changed through the link, which stays a link. A file install creates gets the
mode the umask gives (0644 under the usual 022, as the clients create theirs); an existing file keeps its mode.

Backups: before a file is rewritten, its text is copied to `<file>.skillbank.bak`, beside the path the client
reads (for a symlink too). The backup is the file as it was before install, so it is replaced only when the file
about to change holds nothing install wrote; an install over an earlier one, and uninstall, keep it (and write one
only where none is there). So install -> uninstall -> install -> uninstall: the first install backs up the original,
the first uninstall keeps that backup, the second install backs up the file as it is then (the original again, or
what the user made of it since), and the second uninstall keeps that one.

Uninstall gives the original bytes back when it can: if the file is exactly what install would write now from the
backup, the backup's text is written back (or, where install created the file, the file goes). Otherwise only
skillbank's entries come out, and the rest keeps its layout as far as the format allows: JSON is written with the
file's own indent, `\\u` escaping and final newline; TOML goes through tomlkit, which keeps comments, order and
formatting of everything it does not touch.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
from pydantic import BaseModel
from tomlkit.exceptions import TOMLKitError

from skills_store.errors import ConfigError

Action = Literal["created", "updated", "unchanged", "removed", "deleted", "absent"]
BACKUP_SUFFIX = ".skillbank.bak"


class InstallError(ConfigError):
    """A config cannot be changed as asked (unreadable, or holds a different server); nothing was written."""


class Change(BaseModel):
    path: str
    action: Action
    what: str
    backup: str | None = None

    def line(self) -> str:
        backup = f" (backup: {self.backup})" if self.backup else ""
        return f"{self.action:>9}  {self.path}: {self.what}{backup}"


@dataclass(frozen=True)
class Edit:
    """What install would make of one file."""

    text: str
    what: str
    pre_install: bool = True
    """The file as it was held nothing install writes, so backing it up may replace an older backup."""


#: Uninstall's edit of one file: the text without skillbank's entries and what was taken out, or None when the file
#: holds none. It is given the file's text and its backup's (None when there is none).
Removal = Callable[[str, str | None], tuple[str, str] | None]


BOM = "\ufeff"


def read_text(path: Path) -> str | None:
    """The file's text (through a symlink, line endings as they are, without a UTF-8 BOM: `save` puts it back), or
    None when there is no file."""
    text = _read_raw(path)
    return text[1:] if text is not None and text.startswith(BOM) else text


def _read_raw(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", newline="") as file:
            return file.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise InstallError(
            f"{path} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); the clients read "
            "their configs as UTF-8: save it as UTF-8, then run again"
        ) from None
    except OSError as exc:
        raise InstallError(f"{path} cannot be read ({exc.strerror}); fix it, then run again") from None


def parse_json(text: str | None, path: Path) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix or move it, then run again") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; fix or move it, then run again")
    return data


def parse_toml(text: str | None, path: Path) -> tomlkit.TOMLDocument:
    if text is None:
        return tomlkit.document()
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise InstallError(f"{path} is not valid TOML ({exc}); fix or move it, then run again") from None


def dump_json(data: dict[str, Any], like: str | None = None) -> str:
    """`data` as JSON in the style of `like` (the file's text): its indent (spaces or a tab; one line stays one
    line), `\\u` escapes for non-ASCII when it used them, its line ending, a final newline when it had one. New
    files: 2 spaces."""
    body = (like or "").strip()
    if not body or body in ("{}", "[]"):
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    indent: int | str | None = None
    if "\n" in body:
        found = re.search(r"\n([ \t]+)\S", body)
        indent = 2 if found is None else found[1] if "\t" in found[1] else len(found[1])
    colon = ":" if '":' in body and re.search(r'":\s', body) is None else ": "
    comma = "," if indent is not None or (',"' in body and ", " not in body) else ", "
    ascii_only = body.isascii() and re.search(r"\\u[0-9a-fA-F]{4}", body) is not None
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only, separators=(comma, colon))
    text += "\n" if (like or "").endswith("\n") else ""
    return text.replace("\n", "\r\n") if "\r\n" in (like or "") else text


def backup_file(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def _real(path: Path) -> Path:
    """Where the file lives: a symlink's target (written through, so the link stays), else the path itself."""
    return path.resolve() if path.is_symlink() else path


def _umask() -> int:
    with contextlib.suppress(OSError, ValueError, StopIteration):  # Linux says it without changing it
        status = Path("/proc/self/status").read_text().splitlines()
        return int(next(line for line in status if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _atomic_write(path: Path, text: str, new_mode: int | None = None) -> None:
    real = _real(path)
    real.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        if real.exists():
            shutil.copymode(real, tmp)
        else:  # mkstemp made it 0600; the clients' own files are 0666 less the umask (or what the client uses)
            os.chmod(tmp, (0o666 if new_mode is None else new_mode) & ~_umask())
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _backup(path: Path, replace: bool) -> str:
    """Copy the file (its target, for a symlink) to its backup; an existing backup stays unless `replace`."""
    backup = backup_file(path)
    if replace or not backup.exists():
        if backup.is_symlink():
            backup.unlink()
        shutil.copy2(_real(path), backup)
    return str(backup)


def save(path: Path, text: str, what: str, *, pre_install: bool = True, new_mode: int | None = None) -> Change:
    """Write `text` to `path` when it differs, backing the old file up (see the module's rule for `pre_install`).

    A file that starts with a UTF-8 BOM keeps it. A file with no write permission for anyone is the user's way of
    saying it must not change: refused. `new_mode` is the mode of a file this creates (else the umask's)."""
    old = _read_raw(path)
    if old is not None and old.startswith(BOM) and not text.startswith(BOM):
        text = BOM + text
    if old == text:
        return Change(path=str(path), action="unchanged", what=what)
    mode = _real(path).stat().st_mode if old is not None else 0o200
    if not mode & 0o222:
        raise InstallError(
            f"{path} is read-only (mode {mode & 0o777:o}); make it writable (chmod u+w) if skillbank may change it, "
            "then run again"
        )
    try:
        backup = _backup(path, replace=pre_install) if old is not None else None
        _atomic_write(path, text, new_mode)
    except OSError as exc:
        raise InstallError(f"{path} cannot be written ({exc.strerror}): {exc.filename or path}") from None
    return Change(path=str(path), action="updated" if old is not None else "created", what=what, backup=backup)


def save_edit(path: Path, edit: Edit, new_mode: int | None = None) -> Change:
    return save(path, edit.text, edit.what, pre_install=edit.pre_install, new_mode=new_mode)


def save_all(planned: list[tuple[Path, Edit]], new_mode: dict[Path, int] | None = None) -> list[Change]:
    """`save_edit` each file, all or none: when one cannot be written, the files (and backups, and the folders)
    written before it are put back as they were, and the error says so."""
    undo_log: list[tuple[Path, bytes | None]] = []
    made_dirs: list[Path] = []
    changes: list[Change] = []
    try:
        for path, edit in planned:
            real = _real(path)
            for item in (real, backup_file(path)):
                undo_log.append((item, item.read_bytes() if item.exists() else None))
            missing = [d for d in (real.parent, *real.parent.parents) if not d.exists()]
            made_dirs += missing
            changes.append(save_edit(path, edit, (new_mode or {}).get(path)))
    except InstallError as exc:
        for item, data in reversed(undo_log):
            with contextlib.suppress(OSError):
                if data is None:
                    item.unlink(missing_ok=True)
                else:
                    item.write_bytes(data)
        for folder in made_dirs:  # deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()
        written = [c.path for c in changes if c.action != "unchanged"]
        undone = f"; {', '.join(written)} put back as it was" if written else ""
        raise InstallError(f"{exc}{undone}; nothing was changed") from None
    return changes


def _equivalent(path: Path, text: str, other: str) -> bool:
    """Whether two texts of the config hold the same data (JSON, or TOML for a `.toml` file)."""
    try:
        if path.suffix == ".toml":
            return tomllib.loads(text) == tomllib.loads(other)
        return bool(json.loads(text or "{}") == json.loads(other or "{}"))
    except ValueError:
        return False


def _delete(path: Path, what: str) -> Change:
    """Delete a file that held nothing but what install wrote (no backup needed), and the `.claude` folder install
    made for it when nothing else is in it. A symlink's target goes; the link is left as it was before install."""
    _real(path).unlink()
    if path.parent.name == ".claude":
        with contextlib.suppress(OSError):
            path.parent.rmdir()
    return Change(path=str(path), action="deleted", what=what)


def undo(path: Path, *, installed: Callable[[str | None], str], remove: Removal, deletable: bool) -> Change | None:
    """Take install's entries out of `path`; None when it holds none (or there is no file).

    `installed(backup_text)` is what install would write from the backup (None: from no file). When the file is
    exactly that, the backup's bytes go back (or the file goes, where install created it and `deletable`).
    Otherwise `remove` takes the entries out; a file left empty is deleted when `deletable` (not through a link).
    """
    text = read_text(path)
    if text is None:
        return None
    backup = read_text(backup_file(path))
    removal = remove(text, backup)
    if removal is None:
        return None
    new, what = removal
    try:
        would: str | None = installed(backup)
    except InstallError:  # the backup is not something install writes over (it changed since, or is broken)
        would = None
    # As install left it: exactly what install writes from the backup now, or (installed with other settings: another
    # workspace, SKILLBANK_HOME, skillbank binary) the same as the backup once skillbank's entries are out.
    if (would == text or (backup is not None and _equivalent(path, new, backup))) and backup != text:
        if backup is not None:
            change = save(path, backup, f"{what} (restored byte for byte from the backup)", pre_install=False)
            return change.model_copy(update={"action": "removed"})
        if deletable:
            return _delete(path, what)
    if deletable and new.strip() in ("", "{}") and not path.is_symlink():  # a linked file is the user's to delete
        return _delete(path, what)
    change = save(path, new, what, pre_install=False)
    return change.model_copy(update={"action": "removed"}) if change.action == "updated" else change
