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
