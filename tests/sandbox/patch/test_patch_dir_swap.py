"""A directory swapped for a symbolic link while a patch is applied (what a test suite running in the workspace can
do between the jail's check and the write) never lets the patch read or write outside the workspace."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch
from sandbox.patch.apply import drop_stale_bytecode
from sandbox.patch.dirs import Dirs
from sandbox.patch.jail import Jail
from sandbox.patch.plan import Planner

HashTree = Callable[[Path], str]

PATCH = (
    "--- a/sub/mod.py\n+++ b/sub/mod.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    "--- /dev/null\n+++ b/sub/new.py\n@@ -0,0 +1 @@\n+y = 1\n"
    "--- a/sub/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z = 1\n"
    "--- /dev/null\n+++ b/sub/fresh/leaf.py\n@@ -0,0 +1 @@\n+w = 1\n"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub" / "__pycache__").mkdir(parents=True)
    (root / "sub" / "mod.py").write_text("x = 1\n")
    (root / "sub" / "old.py").write_text("z = 1\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the workspace laid out as the one the patch names: what a swap would point it at."""
    victim = tmp_path / "outside"
    (victim / "__pycache__").mkdir(parents=True)
    (victim / "mod.py").write_text("x = 1\n")
    (victim / "old.py").write_text("z = 1\n")
    (victim / "__pycache__" / "mod.cpython-312.pyc").write_bytes(b"keep me")
    return victim


def swap(workspace: Path, outside: Path) -> None:
    """What a test run by `run_tests` can do in the workspace: move a directory away, put a link in its place."""
    os.rename(workspace / "sub", workspace / "sub.moved")
    (workspace / "sub").symlink_to(outside)


@pytest.fixture
def swap_after_planning(workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_run = Planner.run

    def run_then_swap(self: Planner, sections: object) -> object:
        plan = real_run(self, sections)  # type: ignore[arg-type]
        swap(workspace, outside)
        return plan

    monkeypatch.setattr(Planner, "run", run_then_swap)


@pytest.mark.usefixtures("swap_after_planning")
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_directory_swapped_for_a_link_after_the_check_is_not_written_through(
    workspace: Path, outside: Path, hash_tree: HashTree, dry_run: bool
):
    before = hash_tree(outside)

    result = apply_patch(workspace, PATCH, dry_run=dry_run)

    assert hash_tree(outside) == before
    assert sorted(p.name for p in outside.rglob("*")) == ["__pycache__", "mod.cpython-312.pyc", "mod.py", "old.py"]
    moved = workspace / "sub.moved"
    if dry_run:
        assert sorted(p.name for p in moved.iterdir()) == ["__pycache__", "mod.py", "old.py"]
    else:  # written into the directory that was read and checked, wherever it went inside the workspace
        assert result.applied
        assert (moved / "mod.py").read_text() == "x = 2\n"
        assert (moved / "new.py").read_text() == "y = 1\n"
        assert not (moved / "old.py").exists()
        assert (moved / "fresh" / "leaf.py").read_text() == "w = 1\n"
        assert not [p for p in workspace.parent.rglob("*") if p.name.startswith(".skillbank-patch-")]


@pytest.mark.usefixtures("swap_after_planning")
def test_new_files_in_a_directory_swapped_after_the_check_are_not_created_outside(workspace: Path, outside: Path):
    adds = (
        "--- /dev/null\n+++ b/sub/new.py\n@@ -0,0 +1 @@\n+y = 1\n"
        "--- /dev/null\n+++ b/sub/d/e.py\n@@ -0,0 +1 @@\n+e = 1\n"
    )

    apply_patch(workspace, adds)

    assert sorted(p.name for p in outside.rglob("*")) == ["__pycache__", "mod.cpython-312.pyc", "mod.py", "old.py"]
    assert (workspace / "sub.moved" / "new.py").read_text() == "y = 1\n"
    assert (workspace / "sub.moved" / "d" / "e.py").read_text() == "e = 1\n"


def test_a_directory_swapped_while_the_patch_is_planned_is_not_read_through(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
):
    (outside / "mod.py").write_text("SECRET = 'outside the workspace'\n")
    real_lookup = Jail.lookup
    looked: list[str] = []

    def lookup_then_swap(self: Jail, rel: str) -> object:
        found = real_lookup(self, rel)
        looked.append(rel)
        if rel == "sub/new.py":  # the directory is checked: now swap it before its other files are read
            swap(workspace, outside)
        return found

    monkeypatch.setattr(Jail, "lookup", lookup_then_swap)
    patch = (
        "--- /dev/null\n+++ b/sub/new.py\n@@ -0,0 +1 @@\n+y = 1\n"
        "--- a/sub/mod.py\n+++ b/sub/mod.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    )
    result = apply_patch(workspace, patch, check_syntax=False)

    assert looked == ["sub/new.py", "sub/mod.py"]
    assert result.applied
    assert (outside / "mod.py").read_text() == "SECRET = 'outside the workspace'\n"
    assert not (outside / "new.py").exists()
    assert (workspace / "sub.moved" / "mod.py").read_text() == "x = 2\n"


def test_a_link_in_place_of_a_directory_not_yet_opened_is_refused(tmp_path: Path, outside: Path):
    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    (root / "a" / "b").symlink_to(outside)
    with Dirs(root) as dirs, pytest.raises(OSError, match="symbolic link has taken the place of a directory"):
        dirs.fd(str(root / "a" / "b"))
    (root / "a" / "file").write_text("")
    with Dirs(root) as dirs, pytest.raises(NotADirectoryError):
        dirs.fd(str(root / "a" / "file"))


def test_stale_bytecode_is_never_dropped_through_a_swapped_cache_directory(workspace: Path, outside: Path):
    cache = workspace / "sub" / "__pycache__"
    cache.rmdir()
    cache.symlink_to(outside / "__pycache__")
    with Dirs(workspace) as dirs:
        drop_stale_bytecode([workspace / "sub" / "mod.py"], dirs)
    assert (outside / "__pycache__" / "mod.cpython-312.pyc").read_bytes() == b"keep me"


def test_a_file_swapped_for_a_link_after_its_check_is_not_read_through(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
):
    (outside / "mod.py").write_text("SECRET = 'outside the workspace'\n")
    real_lookup = Jail.lookup

    def lookup_then_swap_the_file(self: Jail, rel: str) -> object:
        found = real_lookup(self, rel)
        (workspace / "sub" / "mod.py").unlink()
        (workspace / "sub" / "mod.py").symlink_to(outside / "mod.py")
        return found

    monkeypatch.setattr(Jail, "lookup", lookup_then_swap_the_file)
    with pytest.raises(PatchError) as refused:
        apply_patch(workspace, "--- a/sub/mod.py\n+++ b/sub/mod.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    assert "SECRET" not in str(refused.value)
    assert "cannot be read" in str(refused.value)
    assert (outside / "mod.py").read_text() == "SECRET = 'outside the workspace'\n"


def test_a_link_put_where_a_new_directory_is_being_made_refuses_the_patch(
    workspace: Path, outside: Path, hash_tree: HashTree, monkeypatch: pytest.MonkeyPatch
):
    real_mkdir = os.mkdir

    def link_first(path: str, *args: object, **kwargs: object) -> None:
        if path == "fresh":  # something in the workspace makes the name a link just before the patch does
            os.symlink(outside, workspace / "sub" / "fresh")
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", link_first)
    before = hash_tree(outside)
    patch = (
        "--- a/sub/mod.py\n+++ b/sub/mod.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "--- /dev/null\n+++ b/sub/fresh/leaf.py\n@@ -0,0 +1 @@\n+w = 1\n"
    )
    with pytest.raises(PatchError, match="replaced by a symbolic link while the patch was being applied"):
        apply_patch(workspace, patch)

    assert hash_tree(outside) == before
    assert (workspace / "sub" / "mod.py").read_text() == "x = 1\n"


def test_a_directory_made_meanwhile_where_a_new_one_is_being_made_is_used(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
):
    real_mkdir = os.mkdir

    def made_first(path: str, *args: object, **kwargs: object) -> None:
        if path == "fresh":
            real_mkdir(workspace / "sub" / "fresh")
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", made_first)
    result = apply_patch(workspace, "--- /dev/null\n+++ b/sub/fresh/leaf.py\n@@ -0,0 +1 @@\n+w = 1\n")

    assert result.applied
    assert (workspace / "sub" / "fresh" / "leaf.py").read_text() == "w = 1\n"


def test_a_file_put_where_a_new_directory_is_being_made_refuses_the_patch(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
):
    real_mkdir = os.mkdir

    def file_first(path: str, *args: object, **kwargs: object) -> None:
        if path == "fresh":
            (workspace / "sub" / "fresh").write_text("in the way\n")
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", file_first)
    with pytest.raises(PatchError, match="replaced by something other than a directory"):
        apply_patch(workspace, "--- /dev/null\n+++ b/sub/fresh/leaf.py\n@@ -0,0 +1 @@\n+w = 1\n")
    assert (workspace / "sub" / "fresh").read_text() == "in the way\n"
