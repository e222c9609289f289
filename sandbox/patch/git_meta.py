"""Git's extended header lines (`new file mode`, `rename from`, `copy to`, ...) and binary sections."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.patch.ops import MalformedPatch
from sandbox.patch.paths import unquote_c

_MODE_RE = re.compile(r"^[0-7]{6}$")
GIT_META = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "rename from ",
    "rename to ",
    "rename old ",
    "rename new ",
    "copy from ",
    "copy to ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
)


@dataclass
class GitMeta:
    old_mode: str | None = None
    new_mode: str | None = None
    new_file_mode: str | None = None
    deleted: bool = False
    rename_from: str | None = None
    rename_to: str | None = None
    copy_from: str | None = None
    copy_to: str | None = None
    names: tuple[str, str] | None = None


def record_meta(meta: GitMeta, prefix: str, value: str, line: int) -> None:
    if prefix.endswith("mode ") and not _MODE_RE.match(value):
        raise MalformedPatch(line, f"bad file mode {value!r}", "use a git mode such as 100644 or 100755")
    if prefix == "old mode ":
        meta.old_mode = value
    elif prefix == "new mode ":
        meta.new_mode = value
    elif prefix == "new file mode ":
        meta.new_file_mode = value
    elif prefix == "deleted file mode ":
        meta.deleted = True
    elif prefix in ("rename from ", "rename old "):
        meta.rename_from = _unquote(value, line)
    elif prefix in ("rename to ", "rename new "):
        meta.rename_to = _unquote(value, line)
    elif prefix == "copy from ":
        meta.copy_from = _unquote(value, line)
    elif prefix == "copy to ":
        meta.copy_to = _unquote(value, line)


def _unquote(value: str, line: int) -> str:
    return unquote_c(value, line)[0] if value.startswith('"') else value


def is_binary_notice(line: str) -> bool:
    return line.startswith("Binary files ") and line.endswith(" differ")


def binary_refusal(line: int, text: str) -> MalformedPatch:
    return MalformedPatch(
        line,
        f"binary patches are refused ({text.strip()[:80]})",
        "apply_patch edits text files only; leave binary files out of the patch",
    )
