"""All or nothing: dry runs, rollback when the OS fails mid-write, and what a rewrite must preserve."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError, WriteFailed
from sandbox.patch import apply_patch, backup, rewrite, write
from sandbox.patch.apply import drop_stale_bytecode
from sandbox.patch.dirs import Dirs, Place

HashTree = Callable[[Path], str]

THREE_FILES = (
    "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n"
    "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
    "--- /dev/null\n+++ b/new/c.txt\n@@ -0,0 +1 @@\n+c\n"
    "--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n"
)


@pytest.fixture
def three(tmp_path: Path) -> Path:
    for name in "abd":
        (tmp_path / f"{name}.txt").write_text(f"{name}\n")
    return tmp_path


def test_dry_run_reports_the_plan_and_writes_nothing(three: Path, hash_tree: HashTree):
    before = hash_tree(three)
    result = apply_patch(three, THREE_FILES, dry_run=True)
    assert hash_tree(three) == before
    assert (result.applied, result.dry_run) == (False, True)
    assert [(c.path, c.action) for c in result.files] == [
        ("a.txt", "modify"),
        ("b.txt", "modify"),
        ("new/c.txt", "add"),
        ("d.txt", "delete"),
    ]


def test_failure_while_replacing_in_a_new_file_rolls_every_file_back(three: Path, hash_tree: HashTree, monkeypatch):
    before = hash_tree(three)

    def failing_replace(src: Place, dst: Place) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write, "_replace", failing_replace)
    with pytest.raises(WriteFailed, match=r"failed writing new/c\.txt .*every file was restored"):
        apply_patch(three, THREE_FILES)
    assert hash_tree(three) == before  # a.txt and b.txt were rewritten before c.txt failed: put back
    assert not [p for p in three.rglob("*") if p.name.startswith(".skillbank-patch-")]


def test_a_rewrite_failing_halfway_is_undone_with_the_files_before_it(three: Path, hash_tree: HashTree, monkeypatch):
    before = hash_tree(three)
    inodes = {name: (three / name).stat().st_ino for name in ("a.txt", "b.txt")}
    real = rewrite.overwrite

    def io_error_in_b(fd: int, data: bytes, mode: int | None) -> None:
        if data == b"B\n":
            os.pwrite(fd, b"B", 0)  # half of the new content is on disk when the write fails
            raise OSError(5, "Input/output error")
        real(fd, data, mode)

    monkeypatch.setattr(rewrite, "overwrite", io_error_in_b)
    with pytest.raises(WriteFailed, match=r"failed writing b\.txt .*every file was restored"):
        apply_patch(three, THREE_FILES)
    assert hash_tree(three) == before
    assert {name: (three / name).stat().st_ino for name in inodes} == inodes  # restored where they were


def test_a_full_disk_while_making_room_for_the_rewrites_changes_nothing(three: Path, hash_tree: HashTree, monkeypatch):
    before = hash_tree(three)
    sizes = {name: (three / name).stat().st_size for name in ("a.txt", "b.txt")}
    real = os.posix_fallocate
    calls: list[int] = []

    def full_at_the_second(fd: int, offset: int, length: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(fd, offset, length)

    monkeypatch.setattr(os, "posix_fallocate", full_at_the_second)
    grow = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+a longer line\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+bbbbbbbb\n"
    )
    with pytest.raises(WriteFailed, match=r"could not write b\.txt .*nothing was changed"):
        apply_patch(three, grow)
    assert hash_tree(three) == before
    assert {name: (three / name).stat().st_size for name in sizes} == sizes  # a.txt's room given back


def test_a_restore_that_fails_in_place_is_made_from_a_temp_file(three: Path, hash_tree: HashTree, monkeypatch):
    before = hash_tree(three)
    real = rewrite.overwrite
    calls: list[bytes] = []

    def fails_after_the_first(fd: int, data: bytes, mode: int | None) -> None:
        calls.append(data)
        if len(calls) > 1:  # b.txt's rewrite, then a.txt's restore: both fail once something is written
            os.pwrite(fd, b"#", 0)
            raise OSError(5, "Input/output error")
        real(fd, data, mode)

    monkeypatch.setattr(rewrite, "overwrite", fails_after_the_first)
    with pytest.raises(WriteFailed, match="every file was restored"):
        apply_patch(three, THREE_FILES)
    assert hash_tree(three) == before
    assert not [p for p in three.rglob("*") if p.name.startswith(".skillbank-patch-")]


def test_a_file_swapped_for_a_copy_with_the_same_size_and_time_counts_as_changed(
    three: Path, monkeypatch: pytest.MonkeyPatch
):
    real_stage = backup.stage

    def swap_b(place: Place, data: bytes, mode: int | None) -> Place:
        b = three / "b.txt"
        info = b.stat()
        (three / "b.new").write_text("x\n")  # an editor's save: a new file moved over the old one
        os.utime(three / "b.new", ns=(info.st_atime_ns, info.st_mtime_ns))
        os.replace(three / "b.new", b)
        return real_stage(place, data, mode)

    monkeypatch.setattr(backup, "stage", swap_b)
    with pytest.raises(PatchError, match=r"b\.txt changed on disk"):
        apply_patch(three, THREE_FILES)
    assert (three / "b.txt").read_text() == "x\n"
    assert (three / "a.txt").read_text() == "a\n"


def test_a_changed_file_is_rewritten_in_place(three: Path):
    inode = (three / "a.txt").stat().st_ino
    apply_patch(three, THREE_FILES)
    assert (three / "a.txt").read_text() == "A\n"
    assert (three / "a.txt").stat().st_ino == inode


def test_a_hard_linked_file_is_replaced_and_its_other_name_keeps_the_old_content(three: Path):
    other = three.parent / f"{three.name}-elsewhere.txt"
    os.link(three / "a.txt", other)
    apply_patch(three, THREE_FILES)
    assert (three / "a.txt").read_text() == "A\n"
    assert other.read_text() == "a\n"
    assert (three / "a.txt").stat().st_nlink == 1


def test_a_file_that_refuses_a_rewrite_is_replaced_instead(three: Path, monkeypatch):
    def busy(place: Place, inode: int | None) -> int:
        raise OSError(26, "Text file busy")  # a running program, or a file this user may not write

    monkeypatch.setattr(rewrite, "open_to_rewrite", busy)
    (three / "b.txt").chmod(0o444)
    apply_patch(three, THREE_FILES)
    assert [(three / n).read_text() for n in ("a.txt", "b.txt")] == ["A\n", "B\n"]
    assert (three / "b.txt").stat().st_mode & 0o7777 == 0o444
    assert not [p for p in three.rglob("*") if p.name.startswith(".skillbank-patch-")]


@pytest.mark.parametrize("planted", ["fifo", "hard link"])
def test_only_a_regular_single_link_file_opens_for_a_rewrite(tmp_path: Path, planted: str):
    with Dirs(tmp_path) as dirs:
        only_a_regular_single_link_file_opens(tmp_path / "target", dirs.place(tmp_path / "target"), planted)


def only_a_regular_single_link_file_opens(path: Path, place: Place, planted: str) -> None:
    if planted == "fifo":
        os.mkfifo(path)
        with pytest.raises(OSError, match="No such device or address"):  # no reader: refused, not waited for
            rewrite.open_to_rewrite(place, None)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # with a reader: opened, seen not to be a file
        try:
            assert rewrite.open_to_rewrite(place, None) is None
        finally:
            os.close(fd)
    else:
        path.write_text("x\n")
        os.link(path, path.with_name("second"))
        assert rewrite.open_to_rewrite(place, None) is None
    os.unlink(path)
    path.write_text("a file in place of the one that was read\n")
    assert rewrite.open_to_rewrite(place, path.stat().st_ino + 1) is None


def test_failure_during_delete_rolls_back_the_replaced_files(three: Path, hash_tree: HashTree, monkeypatch):
    before = hash_tree(three)

    def failing_unlink(place: Place) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(write, "_unlink", failing_unlink)
    with pytest.raises(WriteFailed, match=r"failed writing d\.txt"):
        apply_patch(three, THREE_FILES)
    assert hash_tree(three) == before


def test_a_failed_patch_puts_back_the_hard_linked_file_it_replaced_as_the_same_inode(
    three: Path, hash_tree: HashTree, monkeypatch
):
    other = three.parent / f"{three.name}-elsewhere.txt"
    os.link(three / "a.txt", other)
    before, inode = hash_tree(three), (three / "a.txt").stat().st_ino

    def failing_unlink(place: Place) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(write, "_unlink", failing_unlink)
    with pytest.raises(WriteFailed, match="every file was restored"):
        apply_patch(three, THREE_FILES)

    assert hash_tree(three) == before
    assert (three / "a.txt").stat().st_ino == inode  # not a copy of its bytes: the link to `other` holds
    assert (three / "a.txt").stat().st_nlink == 2
    assert not [p for p in three.rglob("*") if p.name.startswith(".skillbank-patch-")]


TWO_DELETIONS = "--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n"


def fail_unlinking(name: str) -> Callable[[Place], None]:
    real_unlink = write._unlink

    def unlink(place: Place) -> None:
        if place.name == name:
            raise PermissionError(13, "Permission denied")
        real_unlink(place)

    return unlink


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another owner needs root")
def test_a_failed_patch_puts_back_a_deleted_file_with_its_inode_and_owner(
    three: Path, hash_tree: HashTree, monkeypatch
):
    os.chown(three / "a.txt", 4242, 4343)
    before, inode = hash_tree(three), (three / "a.txt").stat().st_ino
    monkeypatch.setattr(write, "_unlink", fail_unlinking("d.txt"))

    with pytest.raises(WriteFailed, match=r"failed writing d\.txt .*every file was restored"):
        apply_patch(three, TWO_DELETIONS)

    restored = (three / "a.txt").stat()
    assert (restored.st_ino, restored.st_uid, restored.st_gid) == (inode, 4242, 4343)
    assert hash_tree(three) == before
    assert not [p for p in three.rglob("*") if p.name.startswith(".skillbank-patch-")]


def test_where_no_link_can_be_kept_a_failed_patch_restores_the_bytes(three: Path, hash_tree: HashTree, monkeypatch):
    before = hash_tree(three)

    def no_links(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")  # fs.protected_hardlinks, or a file system without

    monkeypatch.setattr(os, "link", no_links)
    monkeypatch.setattr(write, "_unlink", fail_unlinking("d.txt"))
    with pytest.raises(WriteFailed, match="every file was restored"):
        apply_patch(three, TWO_DELETIONS)

    assert hash_tree(three) == before


def test_the_links_kept_during_a_patch_are_gone_after_it(three: Path):
    os.link(three / "b.txt", three.parent / f"{three.name}-b-elsewhere.txt")

    apply_patch(three, THREE_FILES)

    assert sorted(p.relative_to(three).as_posix() for p in three.rglob("*")) == ["a.txt", "b.txt", "new", "new/c.txt"]
    assert (three / "b.txt").read_text() == "B\n"


def test_failure_while_staging_changes_nothing(three: Path, hash_tree: HashTree, monkeypatch):
    before = hash_tree(three)
    real_stage = backup.stage

    def failing_stage(place: Place, data: bytes, mode: int | None) -> Place:
        if place.name == "c.txt":
            raise OSError(122, "Disk quota exceeded")
        return real_stage(place, data, mode)

    monkeypatch.setattr(backup, "stage", failing_stage)
    with pytest.raises(WriteFailed, match=r"could not write new/c\.txt .*nothing was changed"):
        apply_patch(three, THREE_FILES)
    assert hash_tree(three) == before


def test_file_changed_by_another_writer_during_the_patch_is_not_clobbered(
    three: Path, hash_tree: HashTree, monkeypatch
):
    real_stage = backup.stage

    def stage_while_someone_edits(place: Place, data: bytes, mode: int | None) -> Place:
        if place.name == "c.txt":
            (three / "b.txt").write_text("edited by someone else, longer\n")
        return real_stage(place, data, mode)

    monkeypatch.setattr(backup, "stage", stage_while_someone_edits)
    with pytest.raises(PatchError, match=r"b\.txt changed on disk while the patch was being planned"):
        apply_patch(three, THREE_FILES)
    assert (three / "a.txt").read_text() == "a\n"
    assert (three / "b.txt").read_text() == "edited by someone else, longer\n"
    assert not (three / "new").exists()
    assert not [p for p in three.rglob("*") if p.name.startswith(".skillbank-patch-")]


def test_file_mode_is_preserved(tmp_path: Path):
    path = tmp_path / "run.sh"
    path.write_text("#!/bin/sh\necho a\n")
    path.chmod(0o750)
    apply_patch(tmp_path, "--- a/run.sh\n+++ b/run.sh\n@@ -2 +2 @@\n-echo a\n+echo b\n")
    assert path.stat().st_mode & 0o7777 == 0o750
    assert path.read_text() == "#!/bin/sh\necho b\n"


def test_bom_is_preserved(tmp_path: Path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbffirst\nsecond\n")
    apply_patch(tmp_path, "--- a/bom.txt\n+++ b/bom.txt\n@@ -1,2 +1,2 @@\n first\n-second\n+2\n")
    assert path.read_bytes() == b"\xef\xbb\xbffirst\n2\n"


def test_missing_final_newline_is_preserved_when_the_patch_does_not_mention_it(tmp_path: Path):
    path = tmp_path / "f.txt"
    path.write_text("a\nb")
    apply_patch(tmp_path, "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n-b\n+B\n+C\n*** End Patch\n")
    assert path.read_bytes() == b"a\nB\nC"


def test_mixed_line_endings_keep_each_unchanged_line_s_ending(tmp_path: Path):
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"one\r\ntwo\nthree\r\nfour\r\n")
    apply_patch(tmp_path, "--- a/mixed.txt\n+++ b/mixed.txt\n@@ -2,2 +2,2 @@\n two\n-three\n+3\n")
    assert path.read_bytes() == b"one\r\ntwo\n3\r\nfour\r\n"


def test_a_single_crlf_line_in_an_lf_file_keeps_its_ending(tmp_path: Path):
    path = tmp_path / "one_crlf.txt"
    path.write_bytes(b"a\nb\r\nc\nd\n")
    apply_patch(tmp_path, "--- a/one_crlf.txt\n+++ b/one_crlf.txt\n@@ -3,2 +3,2 @@\n c\n-d\n+D\n")
    assert path.read_bytes() == b"a\nb\r\nc\nD\n"


def test_invalid_utf8_bytes_survive_a_rewrite(tmp_path: Path):
    path = tmp_path / "latin.txt"
    path.write_bytes(b"caf\xe9\nx\n")
    apply_patch(tmp_path, "--- a/latin.txt\n+++ b/latin.txt\n@@ -2 +2 @@\n-x\n+y\n")
    assert path.read_bytes() == b"caf\xe9\ny\n"


def test_deleting_the_last_file_of_a_directory_removes_the_directory(tmp_path: Path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "only.txt").write_text("x\n")
    apply_patch(tmp_path, "*** Begin Patch\n*** Delete File: pkg/sub/only.txt\n*** End Patch\n")
    assert list(tmp_path.iterdir()) == []


def test_no_temp_files_are_left_after_success(three: Path):
    apply_patch(three, THREE_FILES)
    names = sorted(p.relative_to(three).as_posix() for p in three.rglob("*"))
    assert names == ["a.txt", "b.txt", "new", "new/c.txt"]


GOOD_FIRST = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- /dev/null\n+++ b/fresh.txt\n@@ -0,0 +1 @@\n+f\n"
REFUSALS = {
    "hunk that does not match": "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-zzz\n+B\n",
    "ambiguous hunk": "--- a/dup.txt\n+++ b/dup.txt\n@@\n-x\n+y\n",
    "missing file": "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n",
    "file that already exists": "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n",
    "binary target": "--- a/bin.dat\n+++ b/bin.dat\n@@ -1 +1 @@\n-a\n+b\n",
    "path escaping the workspace": "--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+x\n",
    "deletion with leftover content": "--- a/dup.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
    "binary patch section": "diff --git a/i.png b/i.png\nGIT binary patch\nliteral 1\nIcmZ\n",
}


@pytest.mark.parametrize("kind", list(REFUSALS))
def test_every_kind_of_refusal_after_good_sections_leaves_the_tree_identical(
    tmp_path: Path, hash_tree: HashTree, kind: str
):
    for name, body in {"a.txt": b"a\n", "b.txt": b"b\n", "dup.txt": b"x\nx\n", "bin.dat": b"a\n\x00"}.items():
        (tmp_path / name).write_bytes(body)
    before = hash_tree(tmp_path)
    with pytest.raises(PatchError):
        apply_patch(tmp_path, GOOD_FIRST + REFUSALS[kind])
    assert hash_tree(tmp_path) == before


def test_a_same_size_edit_never_runs_stale_bytecode(tmp_path: Path) -> None:
    import subprocess
    import sys

    module = tmp_path / "mod.py"
    module.write_text("VALUE = 1\n")
    run = [sys.executable, "-c", "import mod; print(mod.VALUE)"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    assert subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout == "1\n"
    assert list((tmp_path / "__pycache__").glob("mod.*.pyc"))
    before = module.stat()
    apply_patch(tmp_path, "--- a/mod.py\n+++ b/mod.py\n@@ -1 +1 @@\n-VALUE = 1\n+VALUE = 2\n")
    # The edit landed within the same second as the import: same mtime, same size, as Python's cache sees it.
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout == "2\n"


def test_only_the_bytecode_of_the_changed_python_files_is_dropped(tmp_path: Path) -> None:
    cache = tmp_path / "pkg" / "__pycache__"
    cache.mkdir(parents=True)
    kept = ["model.cpython-311.pyc", "mod.cpython-311.txt", ".cpython-311.pyc", "other.cpython-311.pyc", "mod.pyc"]
    dropped = ["mod.cpython-311.pyc", "mod.cpython-311.opt-1.pyc", "..cpython-311.pyc"]
    for name in kept + dropped:
        (cache / name).write_bytes(b"")
    changed = ["mod.py", "..py", ".py", "mod.txt", "missing/x.py"]
    drop_stale_bytecode(tmp_path / "pkg" / name for name in changed)
    assert sorted(p.name for p in cache.iterdir()) == sorted(kept)


@pytest.mark.parametrize("taken", [1, backup.NAMED_TRIES])
def test_temp_names_already_taken_are_passed_over_never_followed_or_reused(
    three: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, taken: int
):
    import itertools

    outside = tmp_path_factory.mktemp("outside") / "victim.txt"
    outside.write_text("untouched\n")
    monkeypatch.setattr(backup, "_COUNTER", itertools.count())
    pid = backup._PID[0]
    planted = [three / f"{backup.TEMP_PREFIX}{pid}-{n}" for n in range(taken)]
    for link in planted:
        link.symlink_to(outside)  # a planted link where the next temp file would go
    apply_patch(three, THREE_FILES + "--- /dev/null\n+++ b/fresh.txt\n@@ -0,0 +1 @@\n+f\n")
    assert (three / "a.txt").read_text() == "A\n"
    assert (three / "new" / "c.txt").read_text() == "c\n"
    assert (three / "fresh.txt").read_text() == "f\n"  # staged beside the planted links
    assert outside.read_text() == "untouched\n"
    assert all(link.is_symlink() and link.resolve() == outside for link in planted)
    left = [p for p in three.rglob("*") if p.name.startswith(backup.TEMP_PREFIX) and p not in planted]
    assert left == []
