"""A patch naming a file that is not there (a wrong directory, a Codex path written with git's `a/`) is refused with
the files of that name the workspace does hold, so the next try names the right one."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch


def _refusal(root: Path, patch: str) -> str:
    with pytest.raises(PatchError) as caught:
        apply_patch(root, patch)
    return str(caught.value)


def test_a_file_in_another_directory_is_named(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "utils.py").write_text("x = 1\n")
    text = _refusal(tmp_path, "--- a/src/utils.py\n+++ b/src/utils.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    assert "the file does not exist" in text
    assert "a file of that name is at lib/utils.py" in text


def test_a_codex_path_with_a_git_prefix_is_named_without_it(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("x = 1\n")
    text = _refusal(tmp_path, "*** Begin Patch\n*** Update File: a/calc.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n")
    assert "a file of that name is at calc.py" in text


def test_git_internals_and_links_are_not_offered(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "utils.py").write_text("x = 1\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "utils.py").write_text("x = 1\n")
    (tmp_path / "linked").symlink_to(outside)
    text = _refusal(tmp_path, "--- a/src/utils.py\n+++ b/src/utils.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    assert "the file does not exist" in text
    assert "of that name" not in text


def test_several_files_of_that_name_are_listed_nearest_first(tmp_path: Path) -> None:
    for folder in ("lib/pkg", "vendor/pkg/sub", "tests"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "conf.py").write_text("x = 1\n")
    text = _refusal(tmp_path, "--- a/pkg/conf.py\n+++ b/pkg/conf.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    assert "files of that name are at lib/pkg/conf.py, vendor/pkg/sub/conf.py, tests/conf.py" in text


def test_the_hidden_data_dir_is_not_offered(tmp_path: Path) -> None:
    home = tmp_path / "bank-home"
    home.mkdir()
    (home / "utils.py").write_text("x = 1\n")
    with pytest.raises(PatchError) as caught:
        apply_patch(tmp_path, "--- a/utils.py\n+++ b/utils.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n", hidden=[home])
    assert "of that name" not in str(caught.value)


def test_a_codex_move_sent_again_names_the_file_it_moved_to(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("x = 1\n")
    patch = "*** Begin Patch\n*** Update File: old.py\n*** Move to: lib/new.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    apply_patch(tmp_path, patch)
    with pytest.raises(PatchError) as caught:
        apply_patch(tmp_path, patch)
    assert "lib/new.py, the path it moves to, exists: it looks moved already" in str(caught.value)
