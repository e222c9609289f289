"""Which context lines say how a whitespace-tolerant match re-indents the added lines: the consensus of the lines
that start statements, not one odd line (a tab-indented comment in a space-indented block, a continuation line
aligned under another bracket)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.patch import apply_patch


def _apply(tmp_path: Path, name: str, before: str, patch: str) -> str:
    (tmp_path / name).write_text(before)
    apply_patch(tmp_path, patch)
    return (tmp_path / name).read_text()


@pytest.mark.parametrize(
    ("before", "patch", "after"),
    [
        pytest.param(
            "def f():\n    x = 1\n    y = 2\n\t# a comment someone indented with a tab\n    return x + y\n",
            "--- a/m.py\n+++ b/m.py\n@@ -1,5 +1,6 @@\n def f():\n     x = 1\n     y = 2\n"
            "     # a comment someone indented with a tab\n+    z = 3\n     return x + y\n",
            "def f():\n    x = 1\n    y = 2\n\t# a comment someone indented with a tab\n    z = 3\n    return x + y\n",
            id="tab-indented-comment",
        ),
        pytest.param(
            "def f():\n    '''doc\n\tindented with tab\n    '''\n    return 1\n",
            "--- a/m.py\n+++ b/m.py\n@@ -1,5 +1,6 @@\n def f():\n     '''doc\n     indented with tab\n     '''\n"
            "+    x = 2\n     return 1\n",
            "def f():\n    '''doc\n\tindented with tab\n    '''\n    x = 2\n    return 1\n",
            id="tab-in-docstring",
        ),
    ],
)
def test_one_tab_indented_line_in_a_space_indented_block_leaves_the_added_lines_in_spaces(
    tmp_path: Path, before: str, patch: str, after: str
) -> None:
    result = _apply(tmp_path, "m.py", before, patch)
    assert result == after
    compile(result, "m.py", "exec")  # written in tabs, it was a TabError


def test_a_tab_indented_file_whose_context_has_one_space_indented_line_keeps_the_added_lines_as_written(
    tmp_path: Path,
) -> None:
    # the context disagrees (tabs for 4 spaces, and 4 spaces for 4 spaces): no mixed indentation is made up
    before = "func main() {\n\tif ok {\n    // aligned by hand\n\t\trun()\n\t}\n}\n"
    patch = (
        "--- a/main.go\n+++ b/main.go\n@@ -2,4 +2,5 @@\n     if ok {\n     // aligned by hand\n         run()\n"
        "+        stop()\n     }\n"
    )
    assert _apply(tmp_path, "main.go", before, patch) == before.replace("\t\trun()\n", "\t\trun()\n        stop()\n")


@pytest.mark.parametrize(
    ("before", "patch", "after"),
    [
        pytest.param(  # the model's context names the function's old name: fuzz leaves only the continuation line
            "def f():\n    result = compute_something_long(arg1,\n                                    arg2)\n"
            "    return result\n",
            "--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,5 @@\n def f():\n     result = compute(arg1,\n"
            "                      arg2)\n+    result += 1\n     return result\n",
            "def f():\n    result = compute_something_long(arg1,\n                                    arg2)\n"
            "    result += 1\n    return result\n",
            id="fuzz-leaves-a-line-aligned-under-a-paren",
        ),
        pytest.param(  # the only context line continues the line above it (a backslash), aligned by hand
            "def f():\n    total = first + \\\n            second\n    return total\n",
            "*** Begin Patch\n*** Update File: m.py\n@@\n         second\n+    log(total)\n*** End Patch\n",
            "def f():\n    total = first + \\\n            second\n    log(total)\n    return total\n",
            id="a-line-after-a-backslash",
        ),
    ],
)
def test_a_shift_shown_only_by_continuation_lines_does_not_re_indent_the_added_statements(
    tmp_path: Path, before: str, patch: str, after: str
) -> None:
    result = _apply(tmp_path, "m.py", before, patch)
    assert result == after
    compile(result, "m.py", "exec")


def test_the_statement_lines_set_the_shift_when_a_continuation_line_is_aligned_otherwise(tmp_path: Path) -> None:
    # the model wrote the method one level too shallow, and aligned the call's second line its own way
    before = (
        "class A:\n    def f(self):\n        result = compute(arg1,\n                         arg2)\n"
        "        return result\n"
    )
    patch = (
        "--- a/m.py\n+++ b/m.py\n@@ -2,4 +2,5 @@\n def f(self):\n     result = compute(arg1,\n"
        "             arg2)\n+    result += 1\n     return result\n"
    )
    assert _apply(tmp_path, "m.py", before, patch) == before.replace("arg2)\n", "arg2)\n        result += 1\n")


def test_a_makefile_recipe_gets_tabs_though_a_continued_variable_above_it_is_aligned_with_spaces(
    tmp_path: Path,
) -> None:
    before = "SRCS = a.c \\\n       b.c\n\nall:\n\tcc -o app $(SRCS)\n"
    patch = (
        "--- a/Makefile\n+++ b/Makefile\n@@ -1,5 +1,6 @@\n SRCS = a.c \\\n        b.c\n \n all:\n"
        "     cc -o app $(SRCS)\n+    strip app\n"
    )
    assert _apply(tmp_path, "Makefile", before, patch) == before + "\tstrip app\n"
