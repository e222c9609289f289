"""Planning the `.py` sections first (so the syntax worker starts sooner) gives exactly the plan of patch order:
the same files, changes, warnings, bytes and refusals, also when sections of both kinds meet on one file."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch.jail import Jail
from sandbox.patch.overlay import Entry
from sandbox.patch.parse import iter_patch
from sandbox.patch.plan import Planner

FILES = {
    "a.txt": "alpha\nbeta\ngamma\n",
    "b.py": "def b():\n    return 1\n",
    "c.md": "# c\n",
    "d.py": "X = 1\nY = 2\nZ = 3\n",
    "notes.txt": "one\ntwo\n",
    "pkg/m.py": "M = 1\n",
}

INTERLEAVED = (
    "--- a/a.txt\n+++ b/a.txt\n@@ -2,2 +2,2 @@\n beta  \n-gamma\n+GAMMA\n"  # trailing whitespace: a warning
    "--- a/b.py\n+++ b/b.py\n@@ -5,2 +5,2 @@\n def b():\n-    return 1\n+    return 2\n"  # found at an offset
    "--- /dev/null\n+++ b/docs/new.txt\n@@ -0,0 +1 @@\n+new\n"
    "--- a/c.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# c\n"
    "--- a/d.py\n+++ b/d.py\n@@ -1,3 +1,3 @@\n X = 1\n-Y = 2\n+Y = 20\n Z = 3   \n"
    "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+N = 1\n"
    "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
)


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def plan(root: Path, patch: str, python_first: bool) -> tuple[object, list[str]]:
    """What planning gives (or the refusal), and the files in the order the planner planned them."""
    planned: list[str] = []

    def seen(entry: Entry) -> None:
        planned.append(entry.rel)

    try:
        done = Planner(Jail(root), on_planned=seen, python_first=python_first).run(iter_patch(patch))
    except PatchError as exc:
        return (type(exc).__name__, str(exc)), planned
    shown = (
        [change.model_dump() for change in done.changes],
        done.warnings,
        [entry.rel for entry in done.entries],
        [(op.path.relative_to(root.resolve()).as_posix(), op.data, op.mode, op.original) for op in done.ops],
    )
    return shown, planned


def both(tmp_path: Path, patch: str, files: dict[str, str] = FILES) -> tuple[list[str], list[str]]:
    """Plan in patch order and Python first, each on its own tree; the two plans must be equal."""
    in_order, order_planned = plan(tree(tmp_path / "in_order", files), patch, python_first=False)
    first, first_planned = plan(tree(tmp_path / "first", files), patch, python_first=True)
    assert first == in_order
    return order_planned, first_planned


def test_python_sections_are_planned_first_and_the_plan_is_the_one_of_patch_order(tmp_path: Path) -> None:
    in_order, first = both(tmp_path, INTERLEAVED)
    assert in_order == ["a.txt", "b.py", "docs/new.txt", "c.md", "d.py", "pkg/new.py", "notes.txt"]
    assert first == ["b.py", "d.py", "pkg/new.py", "a.txt", "docs/new.txt", "c.md", "notes.txt"]


def test_a_text_file_renamed_to_python_after_a_text_section_changed_it_is_planned_in_patch_order(
    tmp_path: Path,
) -> None:
    patch = (
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
        "diff --git a/notes.txt b/notes.py\nsimilarity index 50%\nrename from notes.txt\nrename to notes.py\n"
        "--- a/notes.txt\n+++ b/notes.py\n@@ -1,2 +1,2 @@\n ONE\n-two\n+two = 2\n"
    )
    in_order, first = both(tmp_path, patch)
    assert first == ["notes.py", *in_order]  # the rename planned first, then everything again in patch order


def test_a_python_file_renamed_to_text_and_then_changed_by_a_text_section_is_planned_in_patch_order(
    tmp_path: Path,
) -> None:
    patch = (
        "diff --git a/pkg/m.py b/pkg/m.txt\nsimilarity index 90%\nrename from pkg/m.py\nrename to pkg/m.txt\n"
        "--- a/pkg/m.txt\n+++ b/pkg/m.txt\n@@ -1 +1 @@\n-M = 1\n+M is one\n"
    )
    both(tmp_path, patch)


def test_one_file_reached_through_a_linked_directory_by_both_kinds_of_section_is_planned_in_patch_order(
    tmp_path: Path,
) -> None:
    patch = (
        "--- a/alias/notes.txt\n+++ b/alias/notes.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
        "diff --git a/pkg/notes.txt b/pkg/notes.py\ncopy from pkg/notes.txt\ncopy to pkg/notes.py\n"
    )  # (a rename of a file an earlier section changed is refused: see test_patch_rename_swaps)
    files = {**FILES, "pkg/notes.txt": "one\ntwo\n"}
    for side in ("in_order", "first"):
        tree(tmp_path / side, files)
        (tmp_path / side / "alias").symlink_to("pkg")
    in_order, order_planned = plan(tmp_path / "in_order", patch, python_first=False)
    first, _ = plan(tmp_path / "first", patch, python_first=True)
    assert first == in_order
    assert order_planned == ["alias/notes.txt", "pkg/notes.py"]


@pytest.mark.parametrize(
    "patch",
    [
        # hunks that do not match, in a text file first and a Python file after it
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-absent\n+x\n"
        "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-absent\n+x\n"
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-one\n+ONE\n",
        # paths refused while planning: the first one in the patch is the one reported
        "--- a/../a.txt\n+++ b/../a.txt\n@@ -1 +1 @@\n-alpha\n+x\n--- a/../b.py\n+++ b/../b.py\n@@ -1 +1 @@\n-d\n+x\n",
        # a Python file that does not exist after a text file that is refused
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-absent\n+x\n--- a/gone.py\n+++ b/gone.py\n@@ -1 +1 @@\n-x\n+y\n",
        # a text file added where it exists, after a Python change that applies
        "--- a/b.py\n+++ b/b.py\n@@ -2 +2 @@\n-    return 1\n+    return 3\n"
        "--- /dev/null\n+++ b/c.md\n@@ -0,0 +1 @@\n+c\n",
    ],
)
def test_a_refused_patch_is_refused_with_the_message_of_patch_order(tmp_path: Path, patch: str) -> None:
    in_order = plan(tree(tmp_path / "in_order", FILES), patch, python_first=False)[0]
    first = plan(tree(tmp_path / "first", FILES), patch, python_first=True)[0]
    assert isinstance(in_order, tuple)
    assert in_order[0] in ("PatchError", "PathRefused")
    assert first == in_order
