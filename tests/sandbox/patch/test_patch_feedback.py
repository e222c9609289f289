"""Refusal text a model can act on, and Python syntax errors reported (not refused) after a patch."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

SOURCE = "".join(
    [
        "import os\n",
        "\n",
        "\n",
        "def add(a, b):\n",
        "    total = a + b\n",
        "    return total\n",
        "\n",
        "\n",
        "def sub(a, b):\n",
        "    return a - b\n",
    ]
)

PATCH = (
    "--- a/calc.py\n+++ b/calc.py\n"
    "@@ -1,3 +1,4 @@\n import os\n+import sys\n \n \n"
    "@@ -4,3 +5,3 @@\n def add(a, b):\n-    total = a+b\n+    total = a + b + 0\n     return total\n"
    "@@ -9,2 +10,2 @@\n def sub(a, b):\n-    return a - b\n+    return a - b - 0\n"
)


def _refusal(tmp_path: Path, patch: str) -> str:
    with pytest.raises(PatchError) as caught:
        apply_patch(tmp_path, patch)
    return str(caught.value)


def test_refusal_names_the_file_hunk_expected_and_closest_lines(tmp_path: Path):
    (tmp_path / "calc.py").write_text(SOURCE.replace("total = a + b", "total = a  +  b"))
    text = _refusal(tmp_path, PATCH)
    assert text.startswith("apply_patch refused, nothing was written. 1 problem(s):")
    assert "calc.py, hunk 2 of 3 (@@ -4,3 +5,3 @@, patch line 8)" in text
    assert "    -    total = a+b" in text
    assert "Closest lines in the file, 4-6 (2 of 3 identical;" in text
    assert "  ~ 5 |     total = a  +  b" in text
    assert "Hunks that would have applied: calc.py: hunk(s) 1, 3 of 3." in text
    assert "re-read calc.py near line 4" in text


def test_whitespace_only_difference_is_marked_with_a_tilde(tmp_path: Path):
    (tmp_path / "f.txt").write_text("alpha\nbeta gamma\ndelta\n")
    text = _refusal(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta  gamma\n+x\n wrong\n")
    assert "  ~ 2 | beta gamma" in text
    assert "  ! 3 | delta" in text


def test_every_failing_hunk_of_every_file_is_listed(tmp_path: Path):
    (tmp_path / "a.txt").write_text("1\n2\n")
    (tmp_path / "b.txt").write_text("3\n4\n")
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 1\n-9\n+x\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n 3\n-8\n+y\n"
        "--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-c\n+C\n"
    )
    text = _refusal(tmp_path, patch)
    assert "3 problem(s)" in text
    assert "a.txt, hunk 1 of 1" in text
    assert "b.txt, hunk 1 of 1" in text
    assert "c.txt: the file does not exist" in text
    assert "No other hunk of this patch would have applied." in text


def test_missing_codex_anchor_names_the_most_similar_line(tmp_path: Path):
    (tmp_path / "m.py").write_text("def compute_total(items):\n    return sum(items)\n")
    patch = (
        "*** Begin Patch\n*** Update File: m.py\n@@ def compute_totals(items, tax):\n"
        "-    return sum(items)\n+    return 0\n*** End Patch\n"
    )
    text = _refusal(tmp_path, patch)
    assert "the anchor `@@ def compute_totals(items, tax):` matches no line" in text
    assert "The most similar line is 1: 'def compute_total(items):'" in text


def test_empty_file_refusal_says_the_file_is_empty(tmp_path: Path):
    (tmp_path / "e.txt").write_text("")
    text = _refusal(tmp_path, "--- a/e.txt\n+++ b/e.txt\n@@ -1 +1 @@\n-a\n+b\n")
    assert "The file is empty." in text


def test_python_syntax_errors_are_reported_but_the_patch_is_applied(tmp_path: Path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    result = apply_patch(tmp_path, "--- a/ok.py\n+++ b/ok.py\n@@ -1 +1,2 @@\n x = 1\n+def broken(:\n")
    assert result.applied
    assert (tmp_path / "ok.py").read_text() == "x = 1\ndef broken(:\n"
    assert len(result.syntax_errors) == 1
    issue = result.syntax_errors[0]
    assert (issue.path, issue.line) == ("ok.py", 2)
    assert "ok.py:2:" in result.render()


def test_syntax_warnings_are_not_raised_and_valid_code_reports_nothing(tmp_path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = apply_patch(
            tmp_path, "*** Begin Patch\n*** Add File: re_use.py\n+import re\n+P = re.compile('\\d+')\n*** End Patch\n"
        )
    assert result.syntax_errors == []


def test_compile_time_errors_beyond_the_parser_are_reported(tmp_path: Path):
    result = apply_patch(tmp_path, "*** Begin Patch\n*** Add File: top.py\n+x = 1\n+return x\n*** End Patch\n")
    assert [(i.line, i.message) for i in result.syntax_errors] == [(2, "'return' outside function")]


def test_a_coding_declaration_is_honoured_by_the_syntax_check(tmp_path: Path):
    (tmp_path / "legacy.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n")
    result = apply_patch(tmp_path, "--- a/legacy.py\n+++ b/legacy.py\n@@ -2 +2,2 @@\n name = 'caf\udce9'\n+x = 1\n")
    assert result.syntax_errors == []
    assert (tmp_path / "legacy.py").read_bytes().endswith(b"'caf\xe9'\nx = 1\n")


def test_non_python_files_are_not_parsed(tmp_path: Path):
    result = apply_patch(tmp_path, "*** Begin Patch\n*** Add File: notes.txt\n+def broken(:\n*** End Patch\n")
    assert result.syntax_errors == []


def test_render_summarises_each_file(tmp_path: Path):
    (tmp_path / "a.txt").write_text("".join(f"{i}\n" for i in range(10)))
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -3,3 +3,3 @@\n 4\n-5\n+five\n 6\n"
    assert apply_patch(tmp_path, patch, dry_run=True).render() == (
        "Patch dry run, nothing written: 1 file(s).\n  modify a.txt (1 hunk(s), offset +2 lines)"
    )


def test_a_hunk_whose_lines_come_before_an_earlier_hunk_is_told_about_the_order_not_that_they_are_missing(
    tmp_path: Path,
) -> None:
    (tmp_path / "m.py").write_text("def a():\n    x = 1\n    return x\n\n\ndef b():\n    y = 2\n    return y\n")
    patch = (
        "--- a/m.py\n+++ b/m.py\n@@ @@\n def b():\n-    y = 2\n+    y = 3\n     return y\n"
        "@@ @@\n def a():\n-    x = 1\n+    x = 4\n     return x\n"
    )  # hunks without line numbers, listed out of file order
    with pytest.raises(PatchError) as refused:
        apply_patch(tmp_path, patch)
    text = str(refused.value)
    assert "hunk 2 of 2" in text
    assert "are in the file at line 1, but a hunk before it in the patch was applied at or after that place" in text
    assert "list the hunks of m.py in the order of their lines in the file" in text
    assert "were not found" not in text
