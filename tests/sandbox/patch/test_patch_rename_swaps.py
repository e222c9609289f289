"""Git renames and copies onto a path whose own file another section moves away (swaps, rotations): applied as
`git apply` applies them, whatever the order of the sections; onto a file that stays, still refused."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch
from sandbox.patch.jail import Jail
from sandbox.patch.parse import iter_patch
from sandbox.patch.plan import Planner
from sandbox.syntax_worker import SyntaxWorker

from .conftest import run_git, tree_hash


def rename(old: str, new: str, *hunk: str) -> str:
    section = f"diff --git a/{old} b/{new}\nrename from {old}\nrename to {new}\n"
    return section + (f"--- a/{old}\n+++ b/{new}\n" + "".join(hunk) if hunk else "")


def copy(old: str, new: str) -> str:
    return f"diff --git a/{old} b/{new}\ncopy from {old}\ncopy to {new}\n"


@pytest.fixture
def abc(repo: Path) -> Path:
    (repo / "a.txt").write_text("one\n")
    (repo / "b.txt").write_text("two\n")
    (repo / "c.py").write_text("THREE = 3\n")
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", "abc")
    return repo


@pytest.fixture
def worker() -> Iterator[SyntaxWorker]:
    made = SyntaxWorker()
    yield made
    made.close()


def git_result(repo: Path, patch: str, tmp_path: Path) -> str | None:
    """The tree hash `git apply` leaves on a copy of `repo`; None when git refuses the patch."""
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin, symlinks=True)
    done = subprocess.run(["git", "apply", "-"], cwd=twin, input=patch.encode(), capture_output=True)
    return tree_hash(twin) if done.returncode == 0 else None


def contents(repo: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(repo.iterdir()) if p.is_file()}


def test_two_files_swapped_by_renames_as_git_applies_it(abc: Path, tmp_path: Path):
    patch = rename("a.txt", "b.txt") + rename("b.txt", "a.txt")
    expected = git_result(abc, patch, tmp_path)

    result = apply_patch(abc, patch)

    assert tree_hash(abc) == expected
    assert contents(abc) == {"a.txt": "two\n", "b.txt": "one\n", "c.py": "THREE = 3\n"}
    assert [(f.path, f.action, f.old_path) for f in result.files] == [
        ("b.txt", "rename", "a.txt"),
        ("a.txt", "rename", "b.txt"),
    ]


def test_a_swap_with_edits_and_modes_follows_the_content(abc: Path, tmp_path: Path):
    (abc / "a.txt").chmod(0o755)
    run_git(abc, "add", "-A")
    run_git(abc, "commit", "-q", "-m", "x")
    patch = rename("a.txt", "b.txt", "@@ -1 +1,2 @@\n one\n+one more\n") + rename(
        "b.txt", "a.txt", "@@ -1 +1,2 @@\n two\n+two more\n"
    )
    expected = git_result(abc, patch, tmp_path)

    apply_patch(abc, patch)

    assert tree_hash(abc) == expected
    assert (abc / "b.txt").read_text() == "one\none more\n"
    assert (abc / "b.txt").stat().st_mode & 0o111  # the mode moves with the content, as git moves it
    assert not (abc / "a.txt").stat().st_mode & 0o111


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
def test_a_rotation_of_three_files_in_any_section_order(
    abc: Path, tmp_path: Path, worker: SyntaxWorker, order: tuple[int, int, int]
):
    sections = [rename("a.txt", "b.txt"), rename("b.txt", "c.py"), rename("c.py", "a.txt")]
    patch = "".join(sections[i] for i in order)
    expected = git_result(abc, patch, tmp_path)

    result = apply_patch(abc, patch, syntax_worker=worker)

    assert tree_hash(abc) == expected
    assert contents(abc) == {"a.txt": "THREE = 3\n", "b.txt": "one\n", "c.py": "two\n"}
    assert len(result.files) == 3


def test_a_python_swap_plans_alike_in_patch_order_and_python_first(abc: Path, worker: SyntaxWorker):
    (abc / "d.py").write_text("D = 4\n")
    patch = rename("c.py", "d.py", "@@ -1 +1 @@\n-THREE = 3\n+THREE = (3\n") + rename("d.py", "c.py")
    plans = []
    for python_first in (False, True):
        done = Planner(Jail(abc), python_first=python_first).run(iter_patch(patch))
        plans.append([(op.path.name, op.data) for op in done.ops])
    assert plans[0] == plans[1] == [("c.py", b"D = 4\n"), ("d.py", b"THREE = (3\n")]

    result = apply_patch(abc, patch, syntax_worker=worker)

    assert [issue.path for issue in result.syntax_errors] == ["d.py"]  # the line the patch wrote
    assert (abc / "d.py").read_text() == "THREE = (3\n"


def test_a_copy_onto_a_file_that_is_renamed_away(abc: Path, tmp_path: Path):
    patch = copy("a.txt", "b.txt") + rename("b.txt", "d.txt")
    expected = git_result(abc, patch, tmp_path)

    apply_patch(abc, patch)

    assert tree_hash(abc) == expected
    assert contents(abc) == {"a.txt": "one\n", "b.txt": "one\n", "c.py": "THREE = 3\n", "d.txt": "two\n"}


def test_a_swap_on_a_dry_run_writes_nothing(abc: Path):
    before = tree_hash(abc)

    result = apply_patch(abc, rename("a.txt", "b.txt") + rename("b.txt", "a.txt"), dry_run=True)

    assert not result.applied
    assert len(result.files) == 2
    assert tree_hash(abc) == before


DELETE_A = "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n"
CHANGE_B = "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-two\n+TWO\n"


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        (rename("a.txt", "b.txt"), r"b\.txt: the patch moves or copies a file here but this file exists and"),
        # a section before the rename changed the file in its way
        (
            CHANGE_B + rename("a.txt", "b.txt") + rename("b.txt", "d.txt"),
            r"b\.txt: the patch moves or copies a file here but this file exists",
        ),
        # the deletion reads the content moved in, and the file's own stays
        (
            rename("b.txt", "a.txt") + DELETE_A,
            r"a\.txt: the patch moves or copies a file here but this file exists and",
        ),
    ],
    ids=["onto a file that stays", "onto a file changed before", "deleting the content moved in"],
)
def test_a_rename_onto_a_file_still_there_is_refused_as_git_refuses_it(
    abc: Path, tmp_path: Path, patch: str, expected: str
):
    assert git_result(abc, patch, tmp_path) is None
    before = tree_hash(abc)

    with pytest.raises(PatchError, match=expected):
        apply_patch(abc, patch)

    assert tree_hash(abc) == before


def test_a_file_deleted_before_another_is_renamed_onto_its_path(abc: Path, tmp_path: Path):
    patch = DELETE_A + rename("b.txt", "a.txt")
    expected = git_result(abc, patch, tmp_path)

    apply_patch(abc, patch)

    assert tree_hash(abc) == expected
    assert contents(abc) == {"a.txt": "two\n", "c.py": "THREE = 3\n"}


def test_a_codex_move_onto_an_existing_file_is_still_refused(abc: Path):
    # A Codex envelope applies its sections in sequence: a move onto a file in place would overwrite it.
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-one\n+uno\n"
        "*** Update File: b.txt\n*** Move to: d.txt\n@@\n-two\n+dos\n*** End Patch\n"
    )
    before = tree_hash(abc)

    with pytest.raises(PatchError, match=r"b\.txt: the patch moves or copies a file here but this file exists"):
        apply_patch(abc, patch)

    assert tree_hash(abc) == before


def test_a_series_that_changes_a_file_then_renames_it_is_refused_not_applied_without_the_change(abc: Path):
    # `git format-patch --stdout` of two commits: edit a.txt, then rename it. Read as one diff, the rename would move
    # a.txt as it was before the patch and the edit would be lost without a word.
    run_git(abc, "config", "user.name", "t")
    run_git(abc, "config", "user.email", "t@example.com")
    (abc / "a.txt").write_text("ONE\n")
    run_git(abc, "commit", "-qam", "edit")
    run_git(abc, "mv", "a.txt", "moved.txt")
    run_git(abc, "commit", "-qm", "rename")
    series = run_git(abc, "format-patch", "--stdout", "-M", "HEAD~2")
    run_git(abc, "reset", "-q", "--hard", "HEAD~2")
    before = tree_hash(abc)

    with pytest.raises(PatchError, match=r"a\.txt: an earlier section changed this file and this one renames it away"):
        apply_patch(abc, series)

    assert tree_hash(abc) == before
