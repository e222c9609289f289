"""A unified hunk with no line numbers but a line after its `@@` (`@@ class B:`, `@@ @@ class B:`: a model mixing
the Codex anchor into a diff) is placed after that line when it names one, as a Codex anchor would be; when it names
none, the hunk is placed by its context alone, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

SOURCE = "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 1\n"
BODY = "     def run(self):\n-        return 1\n+        return 2\n"


@pytest.mark.parametrize("header", ["@@ class B:", "@@ @@ class B:", "@@ class B: @@", "@@ @@ class B"])
def test_the_text_of_a_header_without_numbers_places_the_hunk(tmp_path: Path, header: str) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    apply_patch(tmp_path, f"--- a/m.py\n+++ b/m.py\n{header}\n{BODY}")
    assert (tmp_path / "m.py").read_text() == SOURCE[: SOURCE.rindex("1")] + "2\n"


def test_a_header_text_that_names_no_line_leaves_the_hunk_to_its_context(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\ny = 2\n")
    apply_patch(tmp_path, "--- a/f.py\n+++ b/f.py\n@@ change y\n x = 1\n-y = 2\n+y = 3\n")
    assert (tmp_path / "f.py").read_text() == "x = 1\ny = 3\n"


def test_a_header_text_that_names_no_line_is_still_ambiguous_when_the_context_is(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(PatchError, match="match equally well at lines 2, 7"):
        apply_patch(tmp_path, f"--- a/m.py\n+++ b/m.py\n@@ class C:\n{BODY}")


def test_a_header_with_numbers_keeps_git_meaning(tmp_path: Path) -> None:
    # The text after a numbered header is git's function context, not an anchor: the stated line decides.
    (tmp_path / "m.py").write_text(SOURCE)
    apply_patch(tmp_path, f"--- a/m.py\n+++ b/m.py\n@@ -7,2 +7,2 @@ class A:\n{BODY}")
    assert (tmp_path / "m.py").read_text() == SOURCE[: SOURCE.rindex("1")] + "2\n"


def test_a_header_text_that_names_no_line_does_not_confine_a_fuzzy_match(tmp_path: Path) -> None:
    # The text names no function of the file: it is no scope the reduced-context match must lie in.
    (tmp_path / "f.py").write_text("def f():\n    x = 1\n    y = 2\n    z = 3\n")
    patch = "--- a/f.py\n+++ b/f.py\n@@ change y here\n def f():\n     x = 1\n"
    patch += "-    y = 2\n+    y = 5\n     z = 3\n     w = 4\n"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "f.py").read_text() == "def f():\n    x = 1\n    y = 5\n    z = 3\n"


def test_a_header_text_naming_a_line_after_the_change_leaves_the_hunk_to_its_context(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\ny = 2\nz = 3\n")
    apply_patch(tmp_path, "--- a/f.py\n+++ b/f.py\n@@ z = 3\n x = 1\n-y = 2\n+y = 5\n")
    assert (tmp_path / "f.py").read_text() == "x = 1\ny = 5\nz = 3\n"
