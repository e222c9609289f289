"""Several sections in one patch: a git rename or copy reads its source as it was before the patch (git's rule),
a modification reads the file as the sections before it left it, and each file is listed once."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

from .conftest import run_git, tree_hash

GitDiff = Callable[..., tuple[str, str]]


def _git_apply(tmp_path: Path, files: dict[str, str], patch: str) -> str:
    """The tree hash `git apply` gives for `patch` on a fresh tree of `files`."""
    root = tmp_path / "by-git"
    root.mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    run_git(root, "init", "-q")
    subprocess.run(["git", "apply", "-"], cwd=root, input=patch.encode(), check=True, capture_output=True)
    shutil.rmtree(root / ".git")
    return tree_hash(root)


MODIFY_THEN_COPY = """\
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-old
+new
diff --git a/a.txt b/c.txt
similarity index 100%
copy from a.txt
copy to c.txt
"""


def test_a_copy_after_its_source_was_modified_copies_the_file_as_it_was_before_the_patch(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("old\n")
    result = apply_patch(ws, MODIFY_THEN_COPY)
    assert (ws / "a.txt").read_text() == "new\n"
    assert (ws / "c.txt").read_text() == "old\n"
    assert [(f.path, f.action) for f in result.files] == [("a.txt", "modify"), ("c.txt", "add")]
    assert tree_hash(ws) == _git_apply(tmp_path, {"a.txt": "old\n"}, MODIFY_THEN_COPY)


def test_git_s_break_and_copy_diff_of_a_rewritten_file_gives_git_s_tree(repo: Path, git_diff: GitDiff) -> None:
    original = "".join(f"alpha {i} some text here\n" for i in range(20))
    (repo / "a.txt").write_text(original)

    def change() -> None:
        (repo / "a.txt").rename(repo / "c.txt")
        (repo / "a.txt").write_text("fresh\n")

    diff, expected = git_diff(repo, change, "-B", "-M")
    assert "copy from a.txt" in diff or "rename from a.txt" in diff
    apply_patch(repo, diff)
    assert (repo / "c.txt").read_text() == original
    assert tree_hash(repo) == expected


def test_a_copy_of_a_file_an_earlier_section_renamed_away_reads_it_from_before_the_patch(tmp_path: Path) -> None:
    patch = (
        "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n"
        "diff --git a/a.txt b/z.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to z.txt\n"
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    apply_patch(ws, patch)
    assert sorted(p.name for p in ws.iterdir()) == ["b.txt", "z.txt"]
    assert tree_hash(ws) == _git_apply(tmp_path, {"a.txt": "one\n"}, patch)


def test_a_codex_move_after_an_update_of_the_same_file_carries_the_update(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n")
    patch = (
        "*** Begin Patch\n*** Update File: m.py\n@@\n-x = 1\n+x = 2\n"
        "*** Update File: m.py\n*** Move to: n.py\n@@\n-x = 2\n+x = 3\n*** End Patch\n"
    )
    apply_patch(tmp_path, patch)
    assert (tmp_path / "n.py").read_text() == "x = 3\n"
    assert not (tmp_path / "m.py").exists()


FILE_AND_FILE_BELOW = """\
diff --git a/pkg b/pkg
new file mode 100644
--- /dev/null
+++ b/pkg
@@ -0,0 +1 @@
+I am a file
diff --git a/pkg/x.py b/pkg/x.py
new file mode 100644
--- /dev/null
+++ b/pkg/x.py
@@ -0,0 +1 @@
+x = 1
"""


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_patch_creating_a_file_and_a_file_below_it_is_refused_naming_both(
    tmp_path: Path, reverse: bool, dry_run: bool
) -> None:
    first, second = FILE_AND_FILE_BELOW.split("diff --git")[1:]
    patch = "diff --git" + (second + "diff --git" + first if reverse else first + "diff --git" + second)
    (tmp_path / "keep.txt").write_text("k\n")
    before = tree_hash(tmp_path)
    with pytest.raises(PatchError) as refused:
        apply_patch(tmp_path, patch, dry_run=dry_run)
    assert "cannot be both a file and a directory" in str(refused.value)
    assert "pkg" in str(refused.value)
    assert "another writer" not in str(refused.value)
    assert tree_hash(tmp_path) == before


def test_a_rename_onto_its_own_path_with_a_mode_change_sets_the_mode(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo hi\n")
    os.chmod(tmp_path / "run.sh", 0o644)
    patch = (
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\nsimilarity index 100%\n"
        "rename from run.sh\nrename to run.sh\n"
    )
    result = apply_patch(tmp_path, patch)
    assert os.stat(tmp_path / "run.sh").st_mode & 0o777 == 0o755
    assert [(f.path, f.mode) for f in result.files] == [("run.sh", "100755")]


def test_two_sections_over_one_file_list_it_once_with_every_hunk(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("".join(f"v{i} = {i}\n" for i in range(30)))
    patch = (
        "--- a/a.py\n+++ b/a.py\n@@ -2,3 +2,3 @@\n v1 = 1\n-v2 = 2\n+v2 = 20\n v3 = 3\n"
        "--- a/a.py\n+++ b/a.py\n@@ -20,3 +20,3 @@\n v19 = 19\n-v20 = 20\n+v20 = 200\n v21 = 21\n"
    )
    result = apply_patch(tmp_path, patch)
    assert [(f.path, f.action, f.hunks) for f in result.files] == [("a.py", "modify", 2)]
    assert "v2 = 20\n" in (tmp_path / "a.py").read_text()
    assert "v20 = 200\n" in (tmp_path / "a.py").read_text()
    assert "1 file" in result.render()


def test_a_file_added_then_changed_by_a_second_section_is_listed_once_as_added(tmp_path: Path) -> None:
    patch = (
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n"
        "--- a/new.py\n+++ b/new.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"
    )
    result = apply_patch(tmp_path, patch)
    assert [(f.path, f.action, f.hunks) for f in result.files] == [("new.py", "add", 2)]
    assert (tmp_path / "new.py").read_text() == "a = 1\nb = 3\n"
