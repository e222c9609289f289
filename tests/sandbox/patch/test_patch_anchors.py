"""What pins a hunk to its place besides its lines: the BOM, the file's edges, a last line without its newline.

`git apply` is the reference (apply.c `apply_one_fragment`, `match_beginning` / `match_end`): each case makes the
patch with `git diff` where one can, applies it with the engine and with `git apply` to copies of one file, and
compares the bytes. Where git refuses a hunk that the contract lets the engine move (a hunk pinned to an edge of
the file found away from it), the engine applies it, never as an exact match, and warns.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import PatchResult, apply_patch

from .conftest import GIT_ENV, run_git

BOM = b"\xef\xbb\xbf"


def _git_diff(tmp_path: Path, before: bytes, after: bytes, *args: str) -> str:
    """`git diff` of one file `f` changed from `before` to `after`."""
    repo = tmp_path / "diff"
    repo.mkdir()
    run_git(repo, "init", "-q")
    (repo / "f").write_bytes(before)
    run_git(repo, "add", "-A")
    run_git(repo, "-c", "core.autocrlf=false", "commit", "-q", "-m", "before")
    (repo / "f").write_bytes(after)
    run_git(repo, "add", "-A")
    return run_git(repo, "-c", "core.autocrlf=false", "diff", "--cached", *args)


def _engine(tmp_path: Path, data: bytes, patch: str) -> tuple[bytes, PatchResult]:
    root = tmp_path / "engine"
    root.mkdir()
    (root / "f").write_bytes(data)
    result = apply_patch(root, patch)
    return (root / "f").read_bytes(), result


def _engine_refusal(tmp_path: Path, data: bytes, patch: str) -> str:
    root = tmp_path / "engine"
    root.mkdir()
    (root / "f").write_bytes(data)
    with pytest.raises(PatchError) as refused:
        apply_patch(root, patch)
    assert (root / "f").read_bytes() == data
    return str(refused.value)


def _git_apply(tmp_path: Path, data: bytes, patch: str, *args: str) -> bytes | None:
    """The file as `git apply` leaves it, or None when git refuses the patch."""
    root = tmp_path / "git"
    root.mkdir()
    run_git(root, "init", "-q")
    (root / "f").write_bytes(data)
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", "-c", "core.autocrlf=false", "apply", *args, "-"],
        cwd=root,
        env=env,
        input=patch.encode("utf-8", "surrogateescape"),
        capture_output=True,
    )
    return (root / "f").read_bytes() if done.returncode == 0 else None


def _fields(result: PatchResult) -> tuple[str, bool, int]:
    change = result.files[0]
    return change.match, change.fuzzy, change.offset_lines


# --- the UTF-8 BOM -------------------------------------------------------------------------------------------------


def test_git_diff_editing_the_first_line_of_a_bom_file_keeps_one_bom_and_matches_exactly(tmp_path: Path):
    before = BOM + b"using System;\nclass A {}\n"
    patch = _git_diff(tmp_path, before, BOM + b"using System.IO;\nclass A {}\n")
    assert "-\ufeffusing System;" in patch
    ours, result = _engine(tmp_path, before, patch)
    assert ours == _git_apply(tmp_path, before, patch) == BOM + b"using System.IO;\nclass A {}\n"
    assert _fields(result) == ("exact", False, 0)
    assert result.warnings == []


def test_git_diff_that_removes_the_bom_removes_it(tmp_path: Path):
    before = BOM + b"a\nb\nc\n"
    patch = _git_diff(tmp_path, before, b"a\nb\nc\n")
    ours, result = _engine(tmp_path, before, patch)
    assert ours == _git_apply(tmp_path, before, patch) == b"a\nb\nc\n"
    assert _fields(result) == ("exact", False, 0)


def test_git_diff_that_adds_a_bom_adds_one(tmp_path: Path):
    before = b"a\nb\nc\n"
    patch = _git_diff(tmp_path, before, BOM + b"a\nb\nc\n")
    ours, result = _engine(tmp_path, before, patch)
    assert ours == _git_apply(tmp_path, before, patch) == BOM + b"a\nb\nc\n"
    assert _fields(result) == ("exact", False, 0)


def test_hunk_adding_a_bom_to_a_file_that_has_one_writes_a_single_bom(tmp_path: Path):
    before = BOM + b"a\nb\n"
    patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-\ufeffa\n+\ufeffA\n b\n"
    ours, result = _engine(tmp_path, before, patch)
    assert ours == _git_apply(tmp_path, before, patch) == BOM + b"A\nb\n"
    assert _fields(result) == ("exact", False, 0)


def test_hunk_that_does_not_show_the_bom_still_matches_a_bom_file_exactly(tmp_path: Path):
    # what a model writes after reading the file: the BOM is invisible to it, and the file keeps it
    before = BOM + b"a\nb\nc\n"
    ours, result = _engine(tmp_path, before, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n")
    assert ours == BOM + b"A\nb\nc\n"
    assert _fields(result) == ("exact", False, 0)


def test_git_diff_with_the_bom_line_as_context_keeps_the_bom(tmp_path: Path):
    before = BOM + b"a\nb\nc\n"
    patch = _git_diff(tmp_path, before, BOM + b"a\nB\nc\n")
    assert " \ufeffa" in patch
    ours, result = _engine(tmp_path, before, patch)
    assert ours == _git_apply(tmp_path, before, patch) == BOM + b"a\nB\nc\n"
    assert _fields(result) == ("exact", False, 0)


# --- `\ No newline at end of file`: the hunk's lines end the file --------------------------------------------------


def test_no_newline_hunk_goes_where_its_lines_end_the_file_not_to_a_nearer_copy(tmp_path: Path):
    patch = _git_diff(tmp_path, b"q\nq\nq\nfoo\nb\nc\nfoo", b"q\nq\nq\nfoo\nb\nc\nfoo\n")
    target = b"q\nq\nq\nfoo\nb\nc\nfoo\nb\nc\nfoo"  # the block repeats once more at the end
    ours, result = _engine(tmp_path, target, patch)
    assert ours == _git_apply(tmp_path, target, patch) == target + b"\n"
    assert _fields(result) == ("offset", False, 3)


def test_zero_context_no_newline_hunk_adds_the_newline_at_the_end_of_a_file_that_grew_above(tmp_path: Path):
    patch = _git_diff(tmp_path, b"a\nfoo\nb\nc\nfoo", b"a\nfoo\nb\nc\nfoo\n", "-U0")
    assert "@@ -5 +5 @@" in patch
    target = b"zz1\nzz2\nzz3\na\nfoo\nb\nc\nfoo"
    ours, result = _engine(tmp_path, target, patch)
    assert ours == target + b"\n"  # as GNU patch does (`git apply --unidiff-zero` changes line 5, a no-op)
    assert _fields(result) == ("offset", False, 3)


def test_no_newline_hunk_whose_lines_are_followed_by_others_is_refused(tmp_path: Path):
    patch = _git_diff(tmp_path, b"a\nb\nc\nd", b"a\nb\nc\nD")
    target = b"a\nb\nc\nd\ne\nf\n"  # the file gained lines after the last one
    assert _git_apply(tmp_path, target, patch) is None
    message = _engine_refusal(tmp_path, target, patch)
    assert "marked `\\ No newline at end of file`, so its lines end the file" in message
    assert "found only at line 1, where 2 more line(s) follow them" in message


def test_no_newline_hunk_that_only_adds_lines_refuses_a_place_with_lines_after_it(tmp_path: Path):
    patch = "--- a/f\n+++ b/f\n@@ -2,0 +3 @@\n+last\n\\ No newline at end of file\n"
    target = b"a\nb\nc\n"
    message = _engine_refusal(tmp_path, target, patch)
    assert "so it adds the file's last line, but it goes in at line 3, and 1 more line(s) follow it" in message


# --- hunks without leading or trailing context are pinned to the file's edges --------------------------------------


def test_hunk_without_trailing_context_goes_to_the_end_of_the_file_over_a_copy_elsewhere(tmp_path: Path):
    patch = "--- a/f\n+++ b/f\n@@ -2,2 +2,3 @@\n x\n y\n+z\n"  # its stated line (2) holds `b`, not `x`
    target = b"a\nb\nx\ny\nc\nd\nx\ny\n"
    ours, result = _engine(tmp_path, target, patch)
    assert ours == _git_apply(tmp_path, target, patch) == b"a\nb\nx\ny\nc\nd\nx\ny\nz\n"
    assert _fields(result) == ("offset", False, 5)


def test_hunk_without_trailing_context_whose_lines_are_at_its_stated_line_stays_there(tmp_path: Path):
    # git pins it to the end; a model's hunk that stops after its change means its stated line
    patch = "--- a/f\n+++ b/f\n@@ -3,2 +3,3 @@\n x\n y\n+z\n"
    target = b"a\nb\nx\ny\nc\nd\nx\ny\n"
    ours, result = _engine(tmp_path, target, patch)
    assert ours == b"a\nb\nx\ny\nz\nc\nd\nx\ny\n"
    assert _fields(result) == ("exact", False, 0)


def test_hunk_without_trailing_context_found_away_from_the_end_goes_after_its_lines(tmp_path: Path):
    # what a model writes to add a line after `c` in the middle of a file (git refuses: it pins the hunk to the end)
    patch = "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n c\n+# footer\n"
    target = b"a\nb\nc\nd\ne\n"
    assert _git_apply(tmp_path, target, patch) is None
    ours, result = _engine(tmp_path, target, patch)
    assert ours == b"a\nb\nc\n# footer\nd\ne\n"
    assert _fields(result) == ("exact", False, 0)
    assert result.warnings == []


def test_hunk_without_leading_context_at_line_one_found_lower_goes_before_its_lines_as_moved(tmp_path: Path):
    patch = "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n+# header\n a\n b\n c\n"
    target = b"x\ny\na\nb\nc\nd\n"  # two lines were added above
    assert _git_apply(tmp_path, target, patch) is None
    ours, result = _engine(tmp_path, target, patch)
    assert ours == b"x\ny\n# header\na\nb\nc\nd\n"
    assert _fields(result) == ("offset", False, 2)


def test_hunks_at_the_edges_of_the_file_they_were_made_for_stay_exact(tmp_path: Path):
    before = b"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
    patch = _git_diff(tmp_path, before, b"top\n" + before + b"bottom\n")
    ours, result = _engine(tmp_path, before, patch)
    assert ours == _git_apply(tmp_path, before, patch) == b"top\n" + before + b"bottom\n"
    assert _fields(result) == ("exact", False, 0)


def test_zero_context_hunks_keep_their_stated_place(tmp_path: Path):
    patch = _git_diff(tmp_path, b"a\nb\nc\n", b"a\nb\nC\n", "-U0")
    target = b"a\nb\nc\nd\ne\n"
    ours, result = _engine(tmp_path, target, patch)
    assert ours == _git_apply(tmp_path, target, patch, "--unidiff-zero") == b"a\nb\nC\nd\ne\n"
    assert _fields(result) == ("exact", False, 0)


# --- CR LF files whose last line ends in a bare CR -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b"a\r\nb\r\nc\r", b"a\r\nb\r\nC\r"),
        (b"a\r\nb\r\nc\r", b"A\r\nb\r\nc\r"),
        (b"a\r\nb\r\nc\r", b"a\r\nb\r\nc\r\n"),
    ],
    ids=["edit-the-last-line", "edit-the-first-line", "add-the-newline"],
)
def test_crlf_file_whose_last_line_ends_in_a_bare_cr_keeps_it_and_matches_exactly(
    tmp_path: Path, before: bytes, after: bytes
):
    patch = _git_diff(tmp_path, before, after)
    ours, result = _engine(tmp_path, before, patch)
    assert ours == _git_apply(tmp_path, before, patch) == after
    assert _fields(result) == ("exact", False, 0)


def test_no_newline_marker_on_a_context_line_followed_by_new_lines_applies_as_fuzz_and_keeps_them(tmp_path: Path):
    # the change is above the marked line, so nothing about the end of the file changes: GNU patch applies it
    # "with fuzz 2" and gives these bytes (`git apply` joins the last context line to the next line: `cyy1`)
    patch = _git_diff(tmp_path, b"a\nb\nc", b"a\nB\nc")
    assert patch.endswith(" c\n\\ No newline at end of file\n")
    ours, result = _engine(tmp_path, b"a\nb\nc\nyy1\nyy2\n", patch)
    assert ours == b"a\nB\nc\nyy1\nyy2\n"
    assert _fields(result) == ("fuzz1", True, 0)
