"""Config files edited in place, safely: read, change in memory, back up, write atomically, report what changed.

A file that does not change is not written (so installing twice is a no-op). Before an existing file is
rewritten it is copied to `<file>.skillbank.bak`. JSON keeps its key order; TOML goes through tomlkit, which keeps
comments, order and formatting of everything it does not touch.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Literal

import tomlkit
from pydantic import BaseModel
from tomlkit.exceptions import TOMLKitError

from skills_store.errors import ConfigError

Action = Literal["created", "updated", "unchanged", "removed", "deleted", "absent"]


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


def read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix or move it, then run again") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; fix or move it, then run again")
    return data


def read_toml(path: Path) -> tomlkit.TOMLDocument:
    if not path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except TOMLKitError as exc:
        raise InstallError(f"{path} is not valid TOML ({exc}); fix or move it, then run again") from None


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if path.exists():
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(path: Path, text: str, what: str, *, delete_if: bool = False) -> Change:
    """Write `text` to `path` when it differs (backing the old file up), or delete the file when `delete_if`."""
    existed = path.exists()
    old = path.read_text(encoding="utf-8") if existed else None
    if delete_if:  # only for files that held nothing but what install wrote: no backup needed
        if not existed:
            return Change(path=str(path), action="absent", what=what)
        path.unlink()
        if path.parent.name == ".claude":  # the folder install made for it, when nothing else is in it
            with contextlib.suppress(OSError):
                path.parent.rmdir()
        return Change(path=str(path), action="deleted", what=what)
    if old == text:
        return Change(path=str(path), action="unchanged", what=what)
    backup = _backup(path) if existed else None
    _atomic_write(path, text)
    return Change(path=str(path), action="updated" if existed else "created", what=what, backup=backup)


def finish(path: Path, data: dict[str, Any], what: str, *, deletable: bool) -> Change:
    """Write a file uninstall edited: `removed` when it changed; deleted when it is now empty and `deletable`."""
    if not data and deletable:
        return save(path, "", what, delete_if=True)
    change = save(path, dump_json(data), what)
    return change.model_copy(update={"action": "removed"}) if change.action == "updated" else change


def _backup(path: Path) -> str:
    backup = path.with_name(path.name + ".skillbank.bak")
    shutil.copy2(path, backup)
    return str(backup)


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def dump_toml(doc: tomlkit.TOMLDocument) -> str:
    return tomlkit.dumps(doc)
