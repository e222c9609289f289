"""The refusal of a patch section whose file is not in the workspace: what it most likely means (deleted or moved
already by an earlier patch, a wrong directory) and the files of that name the workspace does hold."""

from __future__ import annotations

from sandbox.patch.feedback import Problem
from sandbox.patch.jail import Jail
from sandbox.patch.ops import FilePatch
from sandbox.patch.overlay import Overlay


def same_name(jail: Jail, section: FilePatch) -> str:
    """`: a file of that name is at x/y.py` for a path that names no file, when the workspace has such files."""
    found = jail.same_name(section.path.candidates[0] if section.path.candidates else section.label())
    if not found:
        return ""
    if len(found) == 1:
        return f": a file of that name is at {found[0]}"
    return f": files of that name are at {', '.join(found)}"


def missing_file(section: FilePatch, jail: Jail, overlay: Overlay) -> Problem:
    """Why `section` cannot apply when its file does not exist, and the fix to try."""
    where = f"patch line {section.patch_line}"
    if section.kind == "delete":
        elsewhere = same_name(jail, section)
        return Problem(
            section.label(),
            f"the file to delete does not exist ({where}): deleted already, or the path is wrong",
            f"check the path against the workspace{elsewhere}; leave the deletion out if it was made before",
            made_already=not elsewhere,
        )
    if section.new_path is not None and overlay.existing(section.new_path) is not None:
        moved = section.new_path.written
        return Problem(
            section.label(),
            f"the file does not exist ({where}), and {moved}, the path it moves to, exists: it looks moved already",
            f"if so, change {moved} instead (its own path, no move); otherwise check the path against the "
            f"workspace{same_name(jail, section)}",
        )
    return Problem(
        section.label(),
        f"the file does not exist ({where})",
        f"check the path against the workspace{same_name(jail, section)}; to create a file use `--- /dev/null` or "
        "`*** Add File:`",
    )
