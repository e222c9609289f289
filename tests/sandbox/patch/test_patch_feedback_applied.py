"""A refused hunk whose change is already in the file (the patch sent again after a timeout or a retry) is told
so, with the line where its new side stands, instead of being shown as lines that differ in whitespace."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

BEFORE = "import os\n\n\ndef add(a, b):\n    total = a+b\n    return total\n\n\ndef sub(a, b):\n    return a - b\n"
PATCH = (
    "--- a/calc.py\n+++ b/calc.py\n"
    "@@ -4,3 +4,3 @@\n def add(a, b):\n-    total = a+b\n+    total = a + b\n     return total\n"
    "@@ -9,2 +9,2 @@\n def sub(a, b):\n-    return a - b\n+    return b - a\n"
)
CODEX = (
    "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n-    total = a+b\n+    total = a + b\n"
    "*** End Patch\n"
)


def _refusal(root: Path, patch: str) -> str:
    with pytest.raises(PatchError) as caught:
        apply_patch(root, patch)
    return str(caught.value)


def test_a_unified_patch_sent_twice_is_refused_as_already_applied(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(BEFORE)
    apply_patch(tmp_path, PATCH)
    after = (tmp_path / "calc.py").read_bytes()
    text = _refusal(tmp_path, PATCH)
    assert "hunk 1 of 2" in text
    assert "hunk 2 of 2" in text
    assert "already in the file at line 4" in text
    assert "already in the file at line 9" in text
    assert "leave this hunk out" in text
    assert "Closest lines" not in text
    assert (tmp_path / "calc.py").read_bytes() == after


def test_only_the_hunk_that_is_in_the_file_is_called_applied(tmp_path: Path) -> None:
    # The first change was made by an earlier patch; the second is still to do.
    (tmp_path / "calc.py").write_text(BEFORE.replace("a+b", "a + b"))
    text = _refusal(tmp_path, PATCH)
    assert "hunk 1 of 2" in text
    assert "already in the file at line 4" in text
    assert "Hunks that would have applied: calc.py: hunk(s) 2 of 2." in text


def test_a_codex_chunk_sent_twice_is_refused_as_already_applied(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(BEFORE)
    apply_patch(tmp_path, CODEX)
    text = _refusal(tmp_path, CODEX)
    assert "already in the file at line 5" in text


def test_a_hunk_that_adds_nothing_but_blank_lines_is_not_called_applied(tmp_path: Path) -> None:
    # Its new side (blank lines around a context line) stands in many files by chance: no claim is made.
    (tmp_path / "f.txt").write_text("a\n\nb\nc\n")
    text = _refusal(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,3 @@\n-x\n+\n b\n")
    assert "already" not in text
    assert "Closest lines" in text


@pytest.mark.parametrize("elision", ["...", "    # ... rest unchanged", "    // ... existing code ...", "\u2026"])
def test_a_context_line_that_stands_for_left_out_lines_is_named(tmp_path: Path, elision: str) -> None:
    # Models shorten a hunk with a `...` line; the refusal says that line is the problem and how to write the hunk.
    (tmp_path / "calc.py").write_text(BEFORE)
    patch = (
        "--- a/calc.py\n+++ b/calc.py\n@@ -4,7 +4,7 @@\n def add(a, b):\n-    total = a+b\n+    total = a + b\n"
        f" {elision}\n def sub(a, b):\n     return a - b\n"
    )
    text = _refusal(tmp_path, patch)
    assert f"{elision.strip()!r} stands for lines left out" in text
    assert "split the hunk in two" in text


@pytest.mark.parametrize("number", ["{n:>6}\t", "{n:>6}\u2192", "{n} | ", "{n}: "])
def test_lines_copied_with_their_line_numbers_are_named(tmp_path: Path, number: str) -> None:
    # A model copies the lines from a numbered view of the file (`cat -n`, an editor tool's read) with the numbers.
    (tmp_path / "calc.py").write_text(BEFORE)
    rows = [(4, " ", "def add(a, b):"), (5, "-", "    total = a+b"), (6, " ", "    return total")]
    body = "".join(f"{op}{number.format(n=n)}{text}\n" for n, op, text in rows)
    patch = f"--- a/calc.py\n+++ b/calc.py\n@@ -4,3 +4,3 @@\n{body}+{number.format(n=5)}    total = a + b\n"
    text = _refusal(tmp_path, patch)
    assert "start with line numbers" in text
    assert "leave the numbers out" in text


def test_a_patch_whose_every_hunk_is_in_the_file_says_nothing_is_left_to_apply(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(BEFORE)
    apply_patch(tmp_path, PATCH)
    text = _refusal(tmp_path, PATCH)
    assert text.endswith("Every hunk of this patch is in the files already: nothing is left to apply.")
    assert "send the whole patch again" not in text


def test_a_patch_with_a_hunk_still_to_apply_is_sent_again(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(BEFORE.replace("a+b", "a + b"))
    assert _refusal(tmp_path, PATCH).endswith("send the whole patch again.")


def test_a_new_file_sent_again_with_the_same_content_is_called_made_already(tmp_path: Path) -> None:
    patch = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n" + PATCH
    (tmp_path / "calc.py").write_text(BEFORE)
    apply_patch(tmp_path, patch)
    text = _refusal(tmp_path, patch)
    assert "already exists, with the content this patch gives it" in text
    assert text.endswith("nothing is left to apply.")


def test_a_new_file_whose_namesake_differs_is_refused_as_before(tmp_path: Path) -> None:
    (tmp_path / "new.py").write_text("x = 0\n")
    text = _refusal(tmp_path, "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n")
    assert "the patch creates this file but it already exists (patch line 1)" in text
    assert text.endswith("send the whole patch again.")


@pytest.mark.parametrize(
    "patch",
    [
        "*** Begin Patch\n*** Delete File: old.py\n*** End Patch\n",
        "--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n",
    ],
)
def test_a_deletion_sent_again_is_called_made_already(tmp_path: Path, patch: str) -> None:
    (tmp_path / "old.py").write_text("x = 1\n")
    apply_patch(tmp_path, patch)
    text = _refusal(tmp_path, patch)
    assert "the file to delete does not exist" in text
    assert "to create a file" not in text
    assert text.endswith("nothing is left to apply.")


def test_a_deletion_of_a_file_that_lives_elsewhere_names_it(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "old.py").write_text("x = 1\n")
    text = _refusal(tmp_path, "*** Begin Patch\n*** Delete File: old.py\n*** End Patch\n")
    assert "a file of that name is at pkg/old.py" in text
    assert text.endswith("send the whole patch again.")
