"""A hunk matched with its indentation ignored writes its added lines with the file's indentation, level by level
(2 spaces a level in the patch, 4 in the file, or the reverse), or is refused when no mapping holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch


def _apply(tmp_path: Path, name: str, before: str, patch: str) -> str:
    (tmp_path / name).write_text(before)
    apply_patch(tmp_path, patch)
    return (tmp_path / name).read_text()


def test_a_two_space_yaml_patch_adds_a_list_item_at_the_four_space_files_level(tmp_path: Path) -> None:
    before = "spec:\n    containers:\n        - name: a\n          image: x\n"
    patch = (
        "--- a/k.yaml\n+++ b/k.yaml\n@@ -2,3 +2,5 @@\n   containers:\n     - name: a\n       image: x\n"
        "+    - name: b\n+      image: y\n"
    )
    after = _apply(tmp_path, "k.yaml", before, patch)
    assert after == before + "        - name: b\n          image: y\n"


def test_a_two_space_yaml_patch_keeps_the_changed_keys_inside_their_parent(tmp_path: Path) -> None:
    before = "root:\n    child:\n        leaf: 1\n    other: 2\n"
    patch = (
        "--- a/k.yaml\n+++ b/k.yaml\n@@ -1,4 +1,5 @@\n root:\n   child:\n-    leaf: 1\n+    leaf: 2\n+    extra: 3\n"
        "   other: 2\n"
    )
    after = _apply(tmp_path, "k.yaml", before, patch)
    assert after == "root:\n    child:\n        leaf: 2\n        extra: 3\n    other: 2\n"


def test_a_four_space_yaml_patch_is_written_at_the_two_space_files_levels(tmp_path: Path) -> None:
    before = "root:\n  child:\n    leaf: 1\n  other: 2\n"
    patch = (
        "--- a/k.yaml\n+++ b/k.yaml\n@@ -1,4 +1,5 @@\n root:\n     child:\n-        leaf: 1\n+        leaf: 2\n"
        "+        extra: 3\n     other: 2\n"
    )
    after = _apply(tmp_path, "k.yaml", before, patch)
    assert after == "root:\n  child:\n    leaf: 2\n    extra: 3\n  other: 2\n"


def test_a_new_top_level_key_stays_at_column_zero_when_the_context_is_one_level_deep(tmp_path: Path) -> None:
    before = "a:\n    b: 1\n    c: 2\ne: 5\n"
    patch = "--- a/k.yaml\n+++ b/k.yaml\n@@ -2,2 +2,3 @@\n   b: 1\n   c: 2\n+d: 3\n"
    assert _apply(tmp_path, "k.yaml", before, patch) == "a:\n    b: 1\n    c: 2\nd: 3\ne: 5\n"


@pytest.mark.parametrize(
    ("before", "patch", "after"),
    [
        (  # Python: a 2-space patch for a 4-space file
            "class A:\n    def f(self):\n        return 1\n",
            "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,4 @@\n class A:\n   def f(self):\n-    return 1\n"
            "+    if self:\n+      return 2\n+    return 1\n",
            "class A:\n    def f(self):\n        if self:\n            return 2\n        return 1\n",
        ),
        (  # JS: a 4-space patch for a 2-space file
            "function f() {\n  if (x) {\n    go();\n  }\n}\n",
            "--- a/m.js\n+++ b/m.js\n@@ -1,5 +1,6 @@\n function f() {\n     if (x) {\n         go();\n"
            "+        stop();\n     }\n }\n",
            "function f() {\n  if (x) {\n    go();\n    stop();\n  }\n}\n",
        ),
    ],
    ids=["python-2-to-4", "js-4-to-2"],
)
def test_code_patched_with_another_indent_width_gets_the_files_width(
    tmp_path: Path, before: str, patch: str, after: str
) -> None:
    name = "m.py" if "m.py" in patch else "m.js"
    assert _apply(tmp_path, name, before, patch) == after


def test_added_lines_at_a_width_the_context_cannot_map_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    before = "spec:\n    containers:\n        - name: a\n          image: x\n"
    patch = (  # context maps 0->0, 2->4, 4->8, 6->10: neither a shift nor a ratio; 8 is not among them
        "--- a/k.yaml\n+++ b/k.yaml\n@@ -1,4 +1,5 @@\n spec:\n   containers:\n     - name: a\n       image: x\n"
        "+        extra: 1\n"
    )
    (tmp_path / "k.yaml").write_text(before)
    with pytest.raises(PatchError, match="a width its context lines do not map"):
        apply_patch(tmp_path, patch)
    assert (tmp_path / "k.yaml").read_text() == before
