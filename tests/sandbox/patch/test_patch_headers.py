"""File names read from diff headers, checked against `git apply` on the same tree.

Each test builds one tree twice, applies the patch with the engine to one copy and with `git apply` to the other,
and compares the results: where git's rule for a name is subtle (rename lines without prefixes, `.orig` backups,
`--no-prefix` output, trailing spaces), git is the reference.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

from .conftest import GIT_ENV, run_git, tree_hash

GitDiff = Callable[..., tuple[str, str]]
Files = dict[str, str]


def _build(root: Path, files: Files) -> Path:
    root.mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _git_apply(root: Path, patch: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "apply", *args, "-"], cwd=root, env=env, input=patch.encode(), capture_output=True)


def _engine_and_git(tmp_path: Path, files: Files, patch: str, *git_args: str) -> tuple[str, str]:
    """The tree the engine makes of `files` with `patch`, and the one `git apply` makes (both as tree hashes)."""
    ours = _build(tmp_path / "engine", files)
    theirs = _build(tmp_path / "git", files)
    run_git(theirs, "init", "-q")
    done = _git_apply(theirs, patch, *git_args)
    assert done.returncode == 0, done.stderr.decode()
    apply_patch(ours, patch)
    return tree_hash(ours), tree_hash(theirs)


def _refused_as_git_refuses(tmp_path: Path, files: Files, patch: str) -> str:
    """The engine's refusal text, after checking that `git apply` refuses too and that neither changed a file."""
    ours = _build(tmp_path / "engine", files)
    theirs = _build(tmp_path / "git", files)
    run_git(theirs, "init", "-q")
    before = tree_hash(ours)
    assert _git_apply(theirs, patch).returncode != 0
    with pytest.raises(PatchError) as refused:
        apply_patch(ours, patch)
    assert tree_hash(ours) == before == tree_hash(theirs)
    return str(refused.value)


def _git_diff_of(repo: Path, git_diff: GitDiff, files: Files, change: Callable[[], None], *args: str) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    diff, _ = git_diff(repo, change, *args)
    return diff


def test_rename_into_a_directory_named_b_moves_the_file_there(tmp_path: Path, repo: Path, git_diff: GitDiff):
    files = {"x.txt": "hello\n"}

    def change() -> None:
        (repo / "b").mkdir()
        (repo / "x.txt").rename(repo / "b" / "x.txt")

    diff = _git_diff_of(repo, git_diff, files, change, "-M")
    assert "rename to b/x.txt" in diff
    ours, theirs = _engine_and_git(tmp_path, files, diff)
    assert ours == theirs
    assert (tmp_path / "engine" / "b" / "x.txt").read_text() == "hello\n"


def test_rename_out_of_a_directory_named_a_moves_that_file_not_a_top_level_namesake(
    tmp_path: Path, repo: Path, git_diff: GitDiff
):
    files = {"a/y.txt": "one\ntwo\nthree\n", "y.txt": "other\n"}
    diff = _git_diff_of(repo, git_diff, files, lambda: (repo / "a" / "y.txt").rename(repo / "z.txt"), "-M")
    assert "rename from a/y.txt" in diff
    ours, theirs = _engine_and_git(tmp_path, files, diff)
    assert ours == theirs
    assert (tmp_path / "engine" / "y.txt").read_text() == "other\n"


def test_copy_into_a_directory_named_b_lands_there(tmp_path: Path, repo: Path, git_diff: GitDiff):
    body = "".join(f"line {i}\n" for i in range(20))
    files = {"c.txt": body}

    def change() -> None:
        (repo / "b").mkdir()
        (repo / "b" / "c.txt").write_text(body.replace("line 3\n", "line three\n"))

    diff = _git_diff_of(repo, git_diff, files, change, "-C", "--find-copies-harder")
    assert "copy to b/c.txt" in diff
    ours, theirs = _engine_and_git(tmp_path, files, diff)
    assert ours == theirs


@pytest.mark.parametrize(
    ("old", "new"),
    [("x.py.orig", "x.py"), ("x.py~", "x.py"), ("x.py", "x.py.new"), ("a/x.py.orig", "b/x.py")],
    ids=["orig-backup", "tilde-backup", "new-copy", "prefixed-backup"],
)
def test_diff_u_against_a_backup_patches_the_shorter_name_as_git_does(tmp_path: Path, old: str, new: str):
    files = {"x.py": "a = 1\n", "x.py.orig": "a = 1\n", "x.py~": "a = 1\n", "x.py.new": "a = 1\n"}
    patch = (
        f"--- {old}\t2026-01-02 10:00:00.000000000 +0000\n"
        f"+++ {new}\t2026-01-02 10:00:05.000000000 +0000\n"
        "@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    )
    ours, theirs = _engine_and_git(tmp_path, files, patch, "-p1" if old.startswith("a/") else "-p0")
    assert ours == theirs
    assert (tmp_path / "engine" / "x.py").read_text() == "a = 2\n"


def test_diff_u_against_a_backup_falls_back_to_the_backup_when_it_alone_exists(tmp_path: Path):
    (tmp_path / "x.py.orig").write_text("a = 1\n")
    result = apply_patch(tmp_path, "--- x.py.orig\n+++ x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n")
    assert [c.path for c in result.files] == ["x.py.orig"]
    assert (tmp_path / "x.py.orig").read_text() == "a = 2\n"


def test_no_prefix_diff_adding_under_b_and_deleting_under_a_keeps_those_directories(
    tmp_path: Path, repo: Path, git_diff: GitDiff
):
    files = {"b/keep.txt": "k\n", "a/old.txt": "same\n", "old.txt": "same\n"}

    def change() -> None:
        (repo / "b" / "new.txt").write_text("hello\n")
        (repo / "a" / "old.txt").unlink()

    diff = _git_diff_of(repo, git_diff, files, change, "--no-prefix")
    assert "+++ b/new.txt" in diff
    assert "--- a/old.txt" in diff
    ours, theirs = _engine_and_git(tmp_path, files, diff, "-p0")
    assert ours == theirs
    assert (tmp_path / "engine" / "old.txt").exists()


def test_prefixed_diff_adding_under_b_and_deleting_under_a_still_strips_the_prefixes(
    tmp_path: Path, repo: Path, git_diff: GitDiff
):
    files = {"b/keep.txt": "k\n", "a/old.txt": "same\n", "old.txt": "same\n"}

    def change() -> None:
        (repo / "b" / "new.txt").write_text("hello\n")
        (repo / "a" / "old.txt").unlink()

    diff = _git_diff_of(repo, git_diff, files, change)
    ours, theirs = _engine_and_git(tmp_path, files, diff)
    assert ours == theirs


def test_file_names_ending_in_a_space_keep_it(tmp_path: Path, repo: Path, git_diff: GitDiff):
    files = {"x ": "A\n", "x": "other\n"}

    def change() -> None:
        (repo / "x ").write_text("B\n")
        (repo / "n ").write_text("new\n")

    diff = _git_diff_of(repo, git_diff, files, change)
    assert "+++ b/x \t" in diff
    ours, theirs = _engine_and_git(tmp_path, files, diff)
    assert ours == theirs
    assert (tmp_path / "engine" / "x").read_text() == "other\n"
    assert (tmp_path / "engine" / "n ").read_text() == "new\n"


def test_renames_and_copies_to_names_with_spaces_at_their_ends_keep_them(tmp_path: Path, repo: Path, git_diff: GitDiff):
    files = {"f.txt": "hello\n", " g.txt": "gee\n"}

    def change() -> None:
        (repo / "f.txt").rename(repo / " lead.txt")
        (repo / "trail.txt ").write_text("gee\n")  # a copy of ` g.txt`

    diff = _git_diff_of(repo, git_diff, files, change, "-M", "-C", "--find-copies-harder")
    assert "rename to  lead.txt\n" in diff
    assert "copy from  g.txt\ncopy to trail.txt \n" in diff
    ours, theirs = _engine_and_git(tmp_path, files, diff)
    assert ours == theirs
    assert sorted(p.name for p in (tmp_path / "engine").iterdir()) == [" g.txt", " lead.txt", "trail.txt "]


def test_a_rename_source_given_a_space_by_an_editor_is_still_found(tmp_path: Path):
    root = _build(tmp_path / "ws", {"f.txt": "hello\n"})

    apply_patch(root, "diff --git a/f.txt b/g.txt\nrename from f.txt \nrename to g.txt\n")

    assert sorted(p.name for p in root.iterdir()) == ["g.txt"]


@pytest.mark.parametrize(
    "args",
    [("-c", "diff.mnemonicPrefix=true"), ("--src-prefix=x/", "--dst-prefix=y/")],
    ids=["mnemonic c/ i/", "custom x/ y/"],
)
def test_other_prefix_pairs_are_stripped_as_git_apply_strips_them(tmp_path: Path, repo: Path, args: tuple[str, ...]):
    (repo / "f.txt").write_text("hello\n")
    (repo / "i").mkdir()
    (repo / "i" / "kept.txt").write_text("a file under a directory named like a prefix\n")
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-qm", "base")
    (repo / "f.txt").write_text("hello\nworld\n")
    (repo / "empty.txt").write_text("")
    (repo / "new.txt").write_text("new\n")
    (repo / "i" / "kept.txt").write_text("changed\n")
    run_git(repo, "add", "-A")
    config, diff_args = (args, ()) if args[0] == "-c" else ((), args)
    diff = run_git(repo, *config, "diff", "--cached", *diff_args)
    run_git(repo, "reset", "-q", "--hard")
    run_git(repo, "clean", "-qfd")
    assert "+++ b/" not in diff
    files = {"f.txt": "hello\n", "i/kept.txt": "a file under a directory named like a prefix\n"}

    ours, theirs = _engine_and_git(tmp_path, files, diff)

    assert ours == theirs
    assert (tmp_path / "engine" / "empty.txt").read_text() == ""  # a section with no ---/+++ lines
    assert (tmp_path / "engine" / "i" / "kept.txt").read_text() == "changed\n"


def _merge_with_a_resolved_conflict(repo: Path) -> str:
    """`git show --cc` of a merge whose result differs from both parents: a combined diff."""
    (repo / "f.txt").write_text("A\n")
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-qm", "base")
    run_git(repo, "checkout", "-qb", "side")
    (repo / "f.txt").write_text("B\n")
    run_git(repo, "commit", "-qam", "side")
    run_git(repo, "checkout", "-q", "main")
    (repo / "f.txt").write_text("C\n")
    run_git(repo, "commit", "-qam", "main")
    subprocess.run(["git", "merge", "-q", "side"], cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True)
    (repo / "f.txt").write_text("D\n")
    run_git(repo, "commit", "-qam", "merge")
    return run_git(repo, "show", "--cc", "--format=", "HEAD")


def test_combined_diff_of_a_merge_is_refused_as_such(tmp_path: Path, repo: Path):
    diff = _merge_with_a_resolved_conflict(repo)
    assert diff.startswith("diff --cc f.txt")
    message = _refused_as_git_refuses(tmp_path, {"f.txt": "C\n"}, diff)
    assert "combined diffs (merge commits) are not supported" in message
    assert "patch line 1:" in message


def test_triple_at_hunk_without_its_diff_cc_line_is_refused_as_a_combined_diff(tmp_path: Path):
    (tmp_path / "f.txt").write_text("A\n")
    with pytest.raises(PatchError, match=r"combined diffs \(merge commits\) are not supported"):
        apply_patch(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@@ -1,1 -1,1 +1,1 @@@\n- A\n -B\n++C\n")
    assert (tmp_path / "f.txt").read_text() == "A\n"


@pytest.mark.parametrize(
    "patch",
    [
        "diff --git a/x b/x\nindex 1111111..2222222 100644\n",
        "diff --git a/x b/x\nindex 1111111..2222222 100644\n--- a/x\n+++ b/x\n",
        "diff --git a/x b/x\nold mode 100644\nnew mode 100644\n",
        "diff --git a/x b/x\nindex 1111111..2222222 100644\n\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n+y\n",
    ],
    ids=["index-only", "names-but-no-hunks", "same-mode", "blank-line-after-index"],
)
def test_git_section_that_changes_nothing_is_refused_as_git_refuses_it(tmp_path: Path, patch: str):
    message = _refused_as_git_refuses(tmp_path, {"x": "x\n"}, patch)
    assert "patch line 1: the `diff --git` section for x changes nothing" in message


def test_diff_git_line_with_nothing_of_its_section_after_it_is_skipped_as_git_skips_it(tmp_path: Path):
    patch = "diff --git a/x b/x\n\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n+y\n"
    ours, theirs = _engine_and_git(tmp_path, {"x": "x\n"}, patch)
    assert ours == theirs
    assert (tmp_path / "engine" / "x").read_text() == "y\n"


def test_lone_diff_git_line_is_refused_as_a_patch_without_changes(tmp_path: Path):
    message = _refused_as_git_refuses(tmp_path, {"x": "x\n"}, "diff --git a/x b/x\n")
    assert "the patch contains no file changes" in message


def test_git_section_that_only_changes_the_mode_still_applies(tmp_path: Path):
    (tmp_path / "x").write_text("x\n")
    result = apply_patch(tmp_path, "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n")
    assert [(c.path, c.mode) for c in result.files] == [("x", "100755")]
    assert (tmp_path / "x").stat().st_mode & 0o111


def test_rename_whose_diff_git_names_cannot_be_split_is_read_from_its_rename_lines(tmp_path: Path):
    files = {"foo bar": "x\n"}
    patch = "diff --git foo bar baz\nsimilarity index 100%\nrename from foo bar\nrename to baz\n"
    ours, theirs = _engine_and_git(tmp_path, files, patch)
    assert ours == theirs
    assert (tmp_path / "engine" / "baz").read_text() == "x\n"


@pytest.mark.parametrize(
    ("header", "missing"),
    [("--- a/calc.py\n", "`+++ b/calc.py`"), ("+++ b/calc.py\n", "`--- a/calc.py`")],
)
def test_a_file_header_missing_one_of_its_two_lines_is_named(tmp_path: Path, header: str, missing: str) -> None:
    # A model that writes only one of the two lines is told which one, not that the hunk has no header at all.
    (tmp_path / "calc.py").write_text("x = 1\n")
    with pytest.raises(PatchError) as caught:
        apply_patch(tmp_path, header + "@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    text = str(caught.value)
    assert "patch line 1:" in text
    assert f"add the {missing} line" in text
    assert (tmp_path / "calc.py").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    "patch",
    [
        "*** Begin Patch\\n*** Update File: x.txt\\n@@\\n-a\\n+b\\n*** End Patch\\n",
        "--- a/x.txt\\n+++ b/x.txt\\n@@ -1 +1 @@\\n-a\\n+b\\n",
    ],
)
def test_a_patch_whose_line_breaks_were_escaped_twice_is_told_so(tmp_path: Path, patch: str) -> None:
    # A model that escapes its JSON argument twice sends one line with literal backslash-n sequences.
    (tmp_path / "x.txt").write_text("a\n")
    with pytest.raises(PatchError) as caught:
        apply_patch(tmp_path, patch)
    assert "literal `\\n` sequences" in str(caught.value)
    assert (tmp_path / "x.txt").read_text() == "a\n"
