"""The jail: hostile or impossible paths and binary content are refused, and the tree stays byte-identical."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError, RequestRefused, SandboxUnavailable, WorkspaceUnavailable
from sandbox.patch import MAX_PATCH_BYTES, apply_patch

HashTree = Callable[[Path], str]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ok.txt").write_text("a\nb\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return root


def _modify(path: str) -> str:
    return f"--- {path}\n+++ {path}\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"


def _add(path: str) -> str:
    return f"--- /dev/null\n+++ {path}\n@@ -0,0 +1 @@\n+new\n"


def _refused(root: Path, patch: str, hash_tree: HashTree, match: str) -> None:
    before = hash_tree(root.parent)
    with pytest.raises(PatchError, match=match):
        apply_patch(root, patch)
    assert hash_tree(root.parent) == before


@pytest.mark.parametrize("path", ["/etc/passwd", "/tmp/x.txt", "C:/win.txt"])
def test_absolute_paths_are_refused(workspace: Path, hash_tree: HashTree, path: str):
    _refused(workspace, _add(path), hash_tree, "absolute paths are refused")


@pytest.mark.parametrize("path", ["~/x.txt", "~root/x.txt"])
def test_paths_from_a_home_directory_are_refused_as_such(workspace: Path, hash_tree: HashTree, path: str):
    _refused(workspace, _add(path), hash_tree, re.escape("a path from a home directory ('~') is refused"))


@pytest.mark.parametrize(
    "patch",
    [
        "--- /dev/null\n+++ b//tmp/x/new.txt\n@@ -0,0 +1 @@\n+new\n",
        "--- a//etc/x\n+++ b//etc/x\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n",
        "diff --git a//tmp/x/new.txt b//tmp/x/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b//tmp/x/new.txt\n"
        "@@ -0,0 +1 @@\n+new\n",
        "--- a/ok.txt\n+++ b//tmp/ok.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n",
    ],
    ids=["add-under-b-prefix", "modify-under-a-prefix", "git-new-file", "modify-new-side"],
)
def test_absolute_path_behind_an_a_or_b_prefix_is_refused(workspace: Path, hash_tree: HashTree, patch: str):
    _refused(workspace, patch, hash_tree, "absolute paths are refused")
    assert not (workspace / "b").exists()
    assert not (workspace / "a").exists()


@pytest.mark.parametrize(
    "section",
    ["*** Add File: /tmp/x/new.txt\n+x\n", "*** Update File: /etc/hosts\n@@\n-a\n+b\n", "*** Delete File: /etc/x\n"],
)
def test_codex_absolute_paths_are_refused(workspace: Path, hash_tree: HashTree, section: str):
    _refused(workspace, f"*** Begin Patch\n{section}*** End Patch\n", hash_tree, "absolute paths are refused")


def test_codex_move_to_an_absolute_path_is_refused(workspace: Path, hash_tree: HashTree):
    patch = "*** Begin Patch\n*** Update File: ok.txt\n*** Move to: /tmp/moved.txt\n@@\n a\n-b\n+B\n*** End Patch\n"
    _refused(workspace, patch, hash_tree, "absolute paths are refused")


@pytest.mark.parametrize("path", ["../outside.txt", "b/../../outside.txt", "sub/../../x.txt"])
def test_dot_dot_is_refused(workspace: Path, hash_tree: HashTree, path: str):
    _refused(workspace, _modify(path), hash_tree, r"'\.\.' is refused")


def test_codex_path_with_dot_dot_is_refused(workspace: Path, hash_tree: HashTree):
    _refused(workspace, "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch\n", hash_tree, r"'\.\.'")


def test_nul_byte_in_a_path_is_refused(workspace: Path, hash_tree: HashTree):
    _refused(workspace, "*** Begin Patch\n*** Add File: a\x00b\n+x\n*** End Patch\n", hash_tree, "NUL byte")


@pytest.mark.parametrize("path", [".git/config", "b/.git/hooks/pre-commit", "sub/.GIT/x"])
def test_paths_under_dot_git_are_refused(workspace: Path, hash_tree: HashTree, path: str):
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    _refused(workspace, _add(path), hash_tree, r"under \.git/")


def test_symlinked_directory_leading_outside_is_refused(workspace: Path, hash_tree: HashTree):
    (workspace / "escape").symlink_to(workspace.parent)
    _refused(workspace, _modify("escape/outside.txt"), hash_tree, "outside the workspace through a symbolic link")
    _refused(workspace, _add("escape/new.txt"), hash_tree, "outside the workspace")


def test_symlinked_file_is_refused_even_inside_the_workspace(workspace: Path, hash_tree: HashTree):
    (workspace / "link.txt").symlink_to(workspace / "ok.txt")
    _refused(workspace, _modify("link.txt"), hash_tree, r"symbolic link \(to ok\.txt\)")
    (workspace / "out.txt").symlink_to(workspace.parent / "outside.txt")
    _refused(workspace, _modify("out.txt"), hash_tree, "outside the workspace")


def test_symlinked_directory_inside_the_workspace_is_followed(workspace: Path):
    (workspace / "real").mkdir()
    (workspace / "real" / "f.txt").write_text("a\nb\n")
    (workspace / "alias").symlink_to(workspace / "real")
    apply_patch(workspace, _modify("alias/f.txt"))
    assert (workspace / "real" / "f.txt").read_text() == "a\nB\n"
    assert (workspace / "alias").is_symlink()


def test_symlink_into_dot_git_is_refused(workspace: Path, hash_tree: HashTree):
    (workspace / ".git").mkdir()
    (workspace / "hooks").symlink_to(workspace / ".git")
    _refused(workspace, _add("hooks/post-checkout"), hash_tree, r"into \.git/")


def test_binary_target_is_refused(workspace: Path, hash_tree: HashTree):
    (workspace / "img.bin").write_bytes(b"a\nb\x00\n")
    _refused(workspace, _modify("img.bin"), hash_tree, "binary file")
    _refused(workspace, "*** Begin Patch\n*** Delete File: img.bin\n*** End Patch\n", hash_tree, "binary file")


def test_git_binary_patch_is_refused(workspace: Path, hash_tree: HashTree):
    patch = (
        "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "GIT binary patch\nliteral 4\nLcmZ?wbhPyJ+\n\nliteral 0\nHcmV?d00001\n\n"
    )
    _refused(workspace, patch, hash_tree, "binary patches are refused")


def test_binary_files_differ_notice_is_refused(workspace: Path, hash_tree: HashTree):
    _refused(workspace, "Binary files a/x.png and b/x.png differ\n", hash_tree, "binary patches are refused")


def test_patch_over_ten_megabytes_is_refused(workspace: Path, hash_tree: HashTree):
    line = "+" + "x" * 1023 + "\n"
    patch = "--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1 @@\n" + line * (MAX_PATCH_BYTES // len(line) + 1)
    _refused(workspace, patch, hash_tree, "larger than 10 MB")


def test_nul_byte_in_the_patch_text_is_refused(workspace: Path, hash_tree: HashTree):
    _refused(workspace, "--- a/ok.txt\n+++ b/ok.txt\n@@ -1 +1 @@\n-a\n+\x00\n", hash_tree, "NUL byte")


def test_directory_target_is_refused(workspace: Path, hash_tree: HashTree):
    (workspace / "dir").mkdir()
    _refused(workspace, "*** Begin Patch\n*** Delete File: dir\n*** End Patch\n", hash_tree, "directory, not a file")


def test_new_file_below_an_existing_file_is_refused(workspace: Path, hash_tree: HashTree):
    _refused(workspace, _add("ok.txt/child.txt"), hash_tree, r"ok\.txt is a file, not a directory")


def test_fifo_target_is_refused(workspace: Path, hash_tree: HashTree):
    os.mkfifo(workspace / "pipe")
    _refused(workspace, "*** Begin Patch\n*** Delete File: pipe\n*** End Patch\n", hash_tree, "not a regular file")


def test_symlink_and_submodule_modes_are_refused(workspace: Path, hash_tree: HashTree):
    patch = "diff --git a/ln b/ln\nnew file mode 120000\n--- /dev/null\n+++ b/ln\n@@ -0,0 +1 @@\n+/etc/passwd\n"
    _refused(workspace, patch, hash_tree, "symbolic link, submodule or directory")


def test_missing_workspace_root_is_an_operator_problem_not_a_patch_refusal(tmp_path: Path):
    with pytest.raises(WorkspaceUnavailable, match="does not exist") as caught:
        apply_patch(tmp_path / "nowhere", _add("a.txt"))
    assert isinstance(caught.value, SandboxUnavailable)
    assert not isinstance(caught.value, RequestRefused)


@pytest.mark.parametrize(
    "patch",
    [
        _add(".skillbank/chroma/seg/index_metadata.pickle"),
        _add("./.skillbank/new.txt"),
        _modify(".skillbank/notes.txt"),
        "*** Begin Patch\n*** Update File: ok.txt\n*** Move to: .skillbank/ok.txt\n@@\n a\n-b\n+B\n*** End Patch\n",
        "diff --git a/.skillbank/notes.txt b/.skillbank/notes.txt\ndeleted file mode 100644\n"
        "--- a/.skillbank/notes.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n",
    ],
    ids=["add", "dot-slash", "modify", "move-into", "delete"],
)
def test_paths_inside_the_hidden_data_dir_are_refused(workspace: Path, hash_tree: HashTree, patch: str):
    (workspace / ".skillbank").mkdir()
    (workspace / ".skillbank" / "notes.txt").write_text("a\nb\n")
    before = hash_tree(workspace.parent)
    with pytest.raises(PatchError, match=r"inside the skillbank data dir \(\.skillbank/\)"):
        apply_patch(workspace, patch, hidden=[workspace / ".skillbank"])
    assert hash_tree(workspace.parent) == before


def test_a_link_into_the_hidden_data_dir_is_refused(workspace: Path, hash_tree: HashTree):
    (workspace / "data" / "bank").mkdir(parents=True)
    (workspace / "alias").symlink_to(workspace / "data")
    before = hash_tree(workspace.parent)
    with pytest.raises(PatchError, match=r"skillbank data dir \(data/bank/\)"):
        apply_patch(workspace, _add("alias/bank/x.txt"), hidden=[workspace / "data" / "bank"])
    assert hash_tree(workspace.parent) == before


def test_a_hidden_data_dir_beside_the_workspace_leaves_its_files_patchable(workspace: Path):
    (workspace / ".skillbank-notes.txt").write_text("a\nb\n")
    apply_patch(workspace, _modify(".skillbank-notes.txt"), hidden=[workspace / ".skillbank", workspace.parent])
    assert (workspace / ".skillbank-notes.txt").read_text() == "a\nB\n"
