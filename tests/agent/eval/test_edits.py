"""Model answers become patches: SEARCH/REPLACE blocks, fenced diffs, and test-file changes dropped."""

from __future__ import annotations

from pathlib import Path

from agent.eval.edits import answer_to_patch, drop_test_files
from sandbox.patch import apply_patch

CODE = "def clamp(x, lo=0, hi=10):\n    if x < lo:\n        return lo\n    return x\n"


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "stats.py").write_text(CODE)
    return tmp_path


def test_a_search_replace_block_becomes_a_patch_that_applies(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    answer = (
        "The guard is missing.\n\ncalc/stats.py\n```python\n<<<<<<< SEARCH\n    if x < lo:\n        return lo\n"
        "=======\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n>>>>>>> REPLACE\n```\n"
    )
    patch = answer_to_patch(answer, ws)
    assert patch.startswith("--- a/calc/stats.py\n+++ b/calc/stats.py\n")
    apply_patch(ws, patch)
    assert "if x > hi:\n        return hi\n    return x" in (ws / "calc" / "stats.py").read_text()


def test_a_block_with_wrong_indentation_still_matches_and_is_reindented(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    answer = "calc/stats.py\n<<<<<<< SEARCH\nreturn x\n=======\nreturn min(x, hi)\n>>>>>>> REPLACE\n"
    apply_patch(ws, answer_to_patch(answer, ws))
    assert (ws / "calc" / "stats.py").read_text().endswith("    return min(x, hi)\n")


def test_source_quoted_from_a_pytest_traceback_and_an_unclosed_block_still_make_the_patch(tmp_path: Path) -> None:
    """Small models copy the SEARCH lines from the failing output (`>` marker, `E` lines, `file.py:N: Error`) and
    stop before the closing marker; the lines are still the file's, so the edit is still meant."""
    ws = workspace(tmp_path)
    answer = (
        "calc/stats.py\n<<<<<<< SEARCH\n    if x < lo:\n>       return lo\nE       AssertionError\n\n"
        "calc/stats.py:3: AssertionError\n=======\n    if x < lo:\n        return lo - 0\n```"
    )
    apply_patch(ws, answer_to_patch(answer, ws))
    assert (ws / "calc" / "stats.py").read_text() == CODE.replace("return lo\n", "return lo - 0\n")


def test_an_unclosed_block_ends_where_the_next_block_starts(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    answer = (
        "calc/stats.py\n<<<<<<< SEARCH\n        return lo\n=======\n        return lo + 0\n"
        "calc/stats.py\n<<<<<<< SEARCH\n    return x\n=======\n    return min(x, hi)\n>>>>>>> REPLACE\n"
    )
    apply_patch(ws, answer_to_patch(answer, ws))
    assert (ws / "calc" / "stats.py").read_text().endswith("        return lo + 0\n    return min(x, hi)\n")


def test_blocks_that_do_not_match_or_name_missing_files_give_no_patch(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    assert answer_to_patch("calc/stats.py\n<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE", ws) == ""
    assert answer_to_patch("calc/nope.py\n<<<<<<< SEARCH\nreturn x\n=======\nx\n>>>>>>> REPLACE", ws) == ""
    assert answer_to_patch("I could not find the bug.", ws) == ""


def test_a_fenced_unified_diff_is_taken_as_is(tmp_path: Path) -> None:
    diff = "--- a/calc/stats.py\n+++ b/calc/stats.py\n@@ -4 +4 @@\n-    return x\n+    return min(x, hi)\n"
    assert answer_to_patch(f"Fix:\n```diff\n{diff}```", workspace(tmp_path)) == diff


def test_changes_to_test_files_are_dropped_from_a_patch() -> None:
    code = "--- a/calc/stats.py\n+++ b/calc/stats.py\n@@ -1 +1 @@\n-a\n+b\n"
    test = "--- a/tests/test_stats.py\n+++ b/tests/test_stats.py\n@@ -1 +1 @@\n-assert x\n+pass\n"
    assert drop_test_files(code + test) == code
    test_header = "diff --git a/tests/test_stats.py b/tests/test_stats.py\n"
    git = f"{test_header}{test}diff --git a/calc/stats.py b/calc/stats.py\n{code}"
    assert drop_test_files(git) == f"diff --git a/calc/stats.py b/calc/stats.py\n{code}"
