"""Unified diffs: git's extended headers, `diff -u`, `diff -ruN`, missing final newlines, CRLF, wrong counts."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

GitDiff = Callable[..., tuple[str, str]]
HashTree = Callable[[Path], str]


def _roundtrip(repo: Path, git_diff: GitDiff, hash_tree: HashTree, change: Callable[[], None], *args: str) -> None:
    diff, expected = git_diff(repo, change, *args)
    assert diff, "the change produced no diff"
    apply_patch(repo, diff)
    assert hash_tree(repo) == expected


def test_git_diff_modifying_several_files_gives_git_s_result(repo: Path, git_diff: GitDiff, hash_tree: HashTree):
    (repo / "a.py").write_text("".join(f"line {i}\n" for i in range(40)))
    (repo / "pkg").mkdir()
    (repo / "pkg" / "b.txt").write_text("alpha\nbeta\ngamma\n")

    def change() -> None:
        text = (repo / "a.py").read_text().replace("line 3\n", "line three\n").replace("line 30\n", "")
        (repo / "a.py").write_text(text + "appended\n")
        (repo / "pkg" / "b.txt").write_text("alpha\nBETA\ngamma\ndelta\n")

    _roundtrip(repo, git_diff, hash_tree, change)


def test_new_and_deleted_files_from_git_are_created_and_removed(repo: Path, git_diff: GitDiff, hash_tree: HashTree):
    (repo / "old").mkdir()
    (repo / "old" / "gone.txt").write_text("bye\nnow\n")
    (repo / "keep.txt").write_text("k\n")

    def change() -> None:
        shutil.rmtree(repo / "old")
        (repo / "new" / "deep").mkdir(parents=True)
        (repo / "new" / "deep" / "hello.txt").write_text("hello\nworld\n")

    _roundtrip(repo, git_diff, hash_tree, change)
    assert not (repo / "old").exists()


def test_renames_with_and_without_changes_follow_git(repo: Path, git_diff: GitDiff, hash_tree: HashTree):
    body = "".join(f"row {i}\n" for i in range(30))
    (repo / "same.txt").write_text("same\n" + body)
    (repo / "edit.txt").write_text(body)

    def change() -> None:
        (repo / "same.txt").rename(repo / "moved.txt")
        (repo / "sub").mkdir()
        (repo / "edit.txt").rename(repo / "sub" / "edited.txt")
        (repo / "sub" / "edited.txt").write_text(body.replace("row 7\n", "row seven\n"))

    diff, expected = git_diff(repo, change, "-M")
    assert "rename from same.txt" in diff
    assert "rename to sub/edited.txt" in diff
    result = apply_patch(repo, diff)
    assert hash_tree(repo) == expected
    renames = {c.path: c for c in result.files if c.action == "rename"}
    assert renames["moved.txt"].old_path == "same.txt"
    assert renames["sub/edited.txt"].hunks == 1


def test_mode_lines_set_and_clear_the_executable_bit(repo: Path, git_diff: GitDiff, hash_tree: HashTree):
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "tool.sh").write_text("#!/bin/sh\n")
    (repo / "tool.sh").chmod(0o755)

    def change() -> None:
        (repo / "run.sh").chmod(0o755)
        (repo / "tool.sh").chmod(0o644)
        (repo / "new.sh").write_text("#!/bin/sh\n")
        (repo / "new.sh").chmod(0o755)

    diff, expected = git_diff(repo, change)
    assert "new mode 100755" in diff
    result = apply_patch(repo, diff)
    assert hash_tree(repo) == expected
    assert {c.path: c.mode for c in result.files} == {"run.sh": "100755", "tool.sh": "100644", "new.sh": "100755"}


def test_missing_final_newline_is_added_and_removed_as_the_diff_says(
    repo: Path, git_diff: GitDiff, hash_tree: HashTree
):
    (repo / "lacks.txt").write_text("one\ntwo")
    (repo / "has.txt").write_text("one\ntwo\n")
    (repo / "both.txt").write_text("x\ny")

    def change() -> None:
        (repo / "lacks.txt").write_text("one\ntwo\n")
        (repo / "has.txt").write_text("one\ntwo")
        (repo / "both.txt").write_text("x\nY")

    diff, _ = git_diff(repo, change)
    assert diff.count("\\ No newline at end of file") == 4
    _roundtrip(repo, git_diff, hash_tree, change)


def test_crlf_file_keeps_its_line_endings(repo: Path, git_diff: GitDiff, hash_tree: HashTree):
    (repo / "win.txt").write_bytes(b"a\r\nb\r\nc\r\nd\r\n")

    def change() -> None:
        (repo / "win.txt").write_bytes(b"a\r\nB\r\nc\r\nd\r\ne\r\n")

    _roundtrip(repo, git_diff, hash_tree, change)


def test_model_written_lf_patch_on_a_crlf_file_writes_crlf(tmp_path: Path):
    (tmp_path / "win.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    patch = "--- a/win.txt\n+++ b/win.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "win.txt").read_bytes() == b"a\r\nB\r\nB2\r\nc\r\n"


def test_diff_u_without_prefixes_and_with_timestamps_applies(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("first\nsecond\nthird\n")
    patch = (
        "--- notes.txt\t2024-01-02 10:00:00.000000000 +0100\n"
        "+++ notes.txt\t2024-01-03 11:00:00.000000000 +0100\n"
        "@@ -1,3 +1,3 @@\n first\n-second\n+2nd\n third\n"
    )
    apply_patch(tmp_path, patch)
    assert (tmp_path / "notes.txt").read_text() == "first\n2nd\nthird\n"


def test_diff_ruN_of_two_trees_adds_changes_and_deletes(tmp_path: Path, hash_tree: HashTree):
    old, new, work = tmp_path / "proj-1.0", tmp_path / "proj-1.1", tmp_path / "work"
    for root in (old, new):
        (root / "src").mkdir(parents=True)
    (old / "src" / "core.py").write_text("def f():\n    return 1\n")
    (new / "src" / "core.py").write_text("def f():\n    return 2\n")
    (old / "obsolete.txt").write_text("old\n")
    (new / "src" / "added.py").write_text("X = 1\n")
    done = subprocess.run(["diff", "-ruN", "proj-1.0", "proj-1.1"], cwd=tmp_path, capture_output=True, check=False)
    assert done.returncode == 1
    shutil.copytree(old, work)
    apply_patch(work, done.stdout.decode())
    assert not (work / "obsolete.txt").exists()
    assert hash_tree(work) == hash_tree(new)


def test_hunk_counts_that_are_wrong_are_recounted(tmp_path: Path):
    (tmp_path / "f.txt").write_text("a\nb\nc\nd\ne\n")
    too_small = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n b\n-c\n+C\n d\n"
    apply_patch(tmp_path, too_small)
    assert (tmp_path / "f.txt").read_text() == "a\nb\nC\nd\ne\n"
    too_large = "--- a/f.txt\n+++ b/f.txt\n@@ -3,9 +3,9 @@\n C\n-d\n+D\n e\n"
    apply_patch(tmp_path, too_large)
    assert (tmp_path / "f.txt").read_text() == "a\nb\nC\nD\ne\n"


def test_hunk_headers_without_line_numbers_are_placed_by_their_context(tmp_path: Path):
    (tmp_path / "f.py").write_text("def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    patch = "--- a/f.py\n+++ b/f.py\n@@\n def b():\n-    return 2\n+    return 3\n"
    result = apply_patch(tmp_path, patch)
    assert (tmp_path / "f.py").read_text().endswith("return 3\n")
    assert result.files[0].offset_lines == 0


def test_patch_in_a_markdown_fence_and_email_format_applies(tmp_path: Path):
    (tmp_path / "f.txt").write_text("a\nb\n")
    email = (
        "From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] change b\n\n---\n f.txt | 2 +-\n\n"
        "diff --git a/f.txt b/f.txt\nindex 1..2 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
        "-- \n2.43.0\n"
    )
    apply_patch(tmp_path, "```diff\n" + email + "```\n")
    assert (tmp_path / "f.txt").read_text() == "a\nB\n"


def test_quoted_git_paths_with_spaces_and_unicode_apply(repo: Path, git_diff: GitDiff, hash_tree: HashTree):
    (repo / "my file.txt").write_text("x\n")
    (repo / "café.txt").write_text("y\n")

    def change() -> None:
        (repo / "my file.txt").write_text("X\n")
        (repo / "café.txt").write_text("Y\n")

    diff, expected = git_diff(repo, change)
    assert '"a/caf\\303\\251.txt"' in diff
    apply_patch(repo, diff)
    assert hash_tree(repo) == expected


@pytest.mark.parametrize("name", ['q"x ', "café ", 'say "hi" now'])
def test_a_rename_to_a_quoted_name_holding_a_space_before_its_closing_quote_applies(
    repo: Path, git_diff: GitDiff, hash_tree: HashTree, name: str
):
    """`diff --git a/f "b/q\\"x "`: the quoted name holds ` "` itself, and was cut there ('no closing quote')."""
    (repo / "f").write_text("x\n")

    def change() -> None:
        (repo / "f").rename(repo / name)

    diff, expected = git_diff(repo, change, "-M")
    assert '"b/' in diff
    apply_patch(repo, diff)
    assert hash_tree(repo) == expected


def test_git_copy_creates_the_target_from_the_source(repo: Path, git_diff: GitDiff, hash_tree: HashTree):
    body = "".join(f"r{i}\n" for i in range(20))
    (repo / "src.txt").write_text(body)

    def change() -> None:
        (repo / "dst.txt").write_text(body.replace("r5\n", "R5\n"))

    diff, expected = git_diff(repo, change, "-C", "--find-copies-harder")
    assert "copy from src.txt" in diff
    apply_patch(repo, diff)
    assert hash_tree(repo) == expected


def test_patch_with_hunks_but_no_file_header_is_refused(tmp_path: Path):
    with pytest.raises(PatchError, match="no file header"):
        apply_patch(tmp_path, "@@ -1 +1 @@\n-a\n+b\n")


def test_text_that_is_not_a_patch_is_refused_with_the_expected_formats(tmp_path: Path):
    with pytest.raises(PatchError, match=r"(?s)no file changes.*Codex envelope"):
        apply_patch(tmp_path, "please change line 3 to say hello\n")


def test_deleting_a_file_whose_content_differs_is_refused(tmp_path: Path, hash_tree: HashTree):
    (tmp_path / "f.txt").write_text("a\nb\nextra\n")
    before = hash_tree(tmp_path)
    patch = "--- a/f.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    with pytest.raises(PatchError, match="1 of its 3 lines are not removed"):
        apply_patch(tmp_path, patch)
    assert hash_tree(tmp_path) == before


def test_creating_a_file_that_exists_is_refused(tmp_path: Path, hash_tree: HashTree):
    (tmp_path / "f.txt").write_text("a\n")
    before = hash_tree(tmp_path)
    with pytest.raises(PatchError, match="already exists"):
        apply_patch(tmp_path, "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+new\n")
    assert hash_tree(tmp_path) == before


def test_two_sections_for_one_file_apply_in_sequence(tmp_path: Path):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    first = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    second = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n B\n-c\n+C\n"
    apply_patch(tmp_path, first + second)
    assert (tmp_path / "f.txt").read_text() == "a\nB\nC\n"


def test_hunk_adding_to_a_missing_file_without_dev_null_creates_it(tmp_path: Path):
    result = apply_patch(tmp_path, "--- a/pkg/new.py\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n")
    assert (tmp_path / "pkg" / "new.py").read_text() == "x = 1\ny = 2\n"
    assert result.files[0].action == "add"


def test_patch_sent_with_crlf_everywhere_keeps_an_lf_file_lf(tmp_path: Path):
    (tmp_path / "f.txt").write_bytes(b"a\nb\nc\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n".replace("\n", "\r\n")
    apply_patch(tmp_path, patch)
    assert (tmp_path / "f.txt").read_bytes() == b"a\nB\nc\n"


def test_context_line_that_lost_its_space_is_refused_instead_of_skipping_changes(tmp_path: Path):
    (tmp_path / "f.txt").write_text("a\nx\nb\n")
    with pytest.raises(PatchError, match=r"patch line 5: 'x' is not a hunk line"):
        apply_patch(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\nx\n-b\n+B\n")
    assert (tmp_path / "f.txt").read_text() == "a\nx\nb\n"


def test_blank_lines_between_hunks_do_not_orphan_the_next_hunk(tmp_path: Path):
    (tmp_path / "f.txt").write_text("".join(f"{i}\n" for i in range(20)))
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n 0\n-1\n+one\n\n\n@@ -15,2 +15,2 @@\n 14\n-15\n+fifteen\n"
    apply_patch(tmp_path, patch)
    text = (tmp_path / "f.txt").read_text()
    assert "one\n" in text
    assert "fifteen\n" in text


def test_file_header_without_hunks_is_refused(tmp_path: Path):
    (tmp_path / "f.txt").write_text("a\n")
    with pytest.raises(PatchError, match=r"patch line 1: the file header for b/f\.txt has no hunks"):
        apply_patch(tmp_path, "--- a/f.txt\n+++ b/f.txt\n")


def test_a_no_newline_marker_in_the_middle_of_a_hunk_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    # placed after `beta`, it would take the final newline off `delta`, the file's real last line
    (tmp_path / "f.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n alpha\n beta\n\\ No newline at end of file\n-gamma\n+GAMMA\n"
        " delta\n"
    )
    with pytest.raises(PatchError, match="marker follows line 2 of the hunk, but lines of its side come after"):
        apply_patch(tmp_path, patch)
    assert (tmp_path / "f.txt").read_text() == "alpha\nbeta\ngamma\ndelta\n"


def test_no_newline_markers_after_each_side_s_last_line_still_apply(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+B\n"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "f.txt").read_text() == "a\nB\n"
