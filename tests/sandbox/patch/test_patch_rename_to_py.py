"""A file that becomes Python by a move to a `.py` name is compiled whole, as a new file is: nothing said the
blocks the patch did not write compile (the block-wise check is for an edited `.py` file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.patch import apply_patch

BODY = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(60))
TEXT = "x = (\n" + BODY + "def last():\n    return 0\n"


@pytest.mark.parametrize(
    "patch",
    [
        "*** Begin Patch\n*** Update File: script.txt\n*** Move to: script.py\n@@ def last():\n-    return 0\n"
        "+    return 1\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: script.txt\n*** Move to: script.py\n*** End Patch\n",
        "diff --git a/script.txt b/script.py\nsimilarity index 90%\nrename from script.txt\nrename to script.py\n"
        "--- a/script.txt\n+++ b/script.py\n@@ -182,2 +182,2 @@\n def last():\n-    return 0\n+    return 1\n",
    ],
    ids=["codex-move-and-edit", "codex-pure-move", "git-rename-and-edit"],
)
def test_a_text_file_moved_to_a_py_name_reports_its_syntax_error_far_from_the_edit(tmp_path: Path, patch: str) -> None:
    (tmp_path / "script.txt").write_text(TEXT)
    result = apply_patch(tmp_path, patch)
    assert [(issue.path, issue.line) for issue in result.syntax_errors] == [("script.py", 1)]
    assert not (tmp_path / "script.txt").exists()


def test_a_valid_py_file_moved_to_another_py_name_reports_no_syntax_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 0\n")
    patch = "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n def f():\n-    return 0\n+    return 1\n"
    patch += "*** End Patch\n"
    assert apply_patch(tmp_path, patch).syntax_errors == []
    assert (tmp_path / "b.py").read_text() == "def f():\n    return 1\n"
