"""A patch indented with tabs for a file indented with spaces (a model that re-typed the code with tabs): the
context matches ignoring whitespace, and the added lines get the file's spaces, one tab for as many spaces as the
context lines show, instead of tabs that Python refuses (`TabError`) and YAML forbids."""

from __future__ import annotations

from pathlib import Path

from sandbox.patch import apply_patch

SOURCE = "def f(items):\n    for item in items:\n        print(item)\n    return items\n"


def test_tab_indented_added_lines_get_the_files_spaces(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    patch = (
        "--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,6 @@\n def f(items):\n \tfor item in items:\n \t\tprint(item)\n"
        "+\t\tif not item:\n+\t\t\tbreak\n \treturn items\n"
    )
    result = apply_patch(tmp_path, patch)
    assert (tmp_path / "m.py").read_text() == (
        "def f(items):\n    for item in items:\n        print(item)\n        if not item:\n            break\n"
        "    return items\n"
    )
    assert result.syntax_errors == []
    assert result.files[0].match == "surrounding_ws"


def test_two_spaces_a_tab_when_the_file_has_two(tmp_path: Path) -> None:
    (tmp_path / "c.yml").write_text("a:\n  b: 1\n  c: 2\n")
    apply_patch(tmp_path, "--- a/c.yml\n+++ b/c.yml\n@@ -1,3 +1,4 @@\n a:\n \tb: 1\n+\td: 4\n \tc: 2\n")
    assert (tmp_path / "c.yml").read_text() == "a:\n  b: 1\n  d: 4\n  c: 2\n"


def test_context_that_disagrees_on_the_width_leaves_the_added_lines_as_written(tmp_path: Path) -> None:
    # One tab stands for 4 spaces on one line and 2 on another: no one width, so nothing is converted.
    (tmp_path / "f.txt").write_text("x\n    a\n  b\n")
    apply_patch(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n x\n \ta\n+\tnew\n \tb\n")
    assert (tmp_path / "f.txt").read_text() == "x\n    a\n\tnew\n  b\n"
