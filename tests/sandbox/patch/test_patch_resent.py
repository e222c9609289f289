"""The same patch sent again after it applied is refused as applied before, also where a lenient match would find
its lines a second time: a hunk pinned to a file's edge by its missing context. An insertion (no old lines) is
not checked: `git diff -U0` puts a duplicated block in front of its twin."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

APPLIED_BEFORE = r"already at line 1, where it says it goes \(was the patch applied before\?\)"

#: No leading context (it begins the file) and no trailing context (it ends it): git pins it to both edges.
BOTH_EDGES = "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,4 @@\n+echo top\n #!/bin/sh\n echo hi\n+echo bottom\n"
#: Lines added at the top of a file (`-U0`), or to a file that was empty.
AT_THE_TOP = "--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1,2 @@\n+first\n+second\n"


def git_apply_twice(root: Path, patch: str) -> tuple[int, int]:
    codes = []
    for _ in range(2):
        done = subprocess.run(["git", "apply", "-"], cwd=root, input=patch.encode(), capture_output=True)
        codes.append(done.returncode)
    return codes[0], codes[1]


def test_a_patch_pinned_to_both_edges_sent_again_is_refused_as_applied_before(tmp_path: Path) -> None:
    twin = tmp_path / "git"
    twin.mkdir()
    (twin / "run.sh").write_text("#!/bin/sh\necho hi\n")
    assert git_apply_twice(twin, BOTH_EDGES) == (0, 1)  # git refuses the second time too
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")

    apply_patch(ws, BOTH_EDGES)
    once = (ws / "run.sh").read_text()
    assert once == "echo top\n#!/bin/sh\necho hi\necho bottom\n" == (twin / "run.sh").read_text()
    with pytest.raises(PatchError, match=APPLIED_BEFORE):
        apply_patch(ws, BOTH_EDGES)

    assert (ws / "run.sh").read_text() == once


def test_lines_added_at_the_top_of_a_file_that_is_not_empty_still_go_in(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("third\n")

    apply_patch(tmp_path, AT_THE_TOP)  # a `-U0` diff's insertion at the top: lenient, as GNU patch is

    assert (tmp_path / "notes.txt").read_text() == "first\nsecond\nthird\n"


def test_an_edge_hunk_of_a_file_that_grew_above_still_goes_to_its_edge(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("# added by someone\n#!/bin/sh\necho hi\n")
    patch = "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,3 @@\n #!/bin/sh\n echo hi\n+echo bottom\n"

    result = apply_patch(tmp_path, patch)

    assert (tmp_path / "run.sh").read_text() == "# added by someone\n#!/bin/sh\necho hi\necho bottom\n"
    assert result.files[0].offset_lines == 1


def test_a_block_duplicated_in_front_of_its_twin_by_a_u0_diff_goes_in(tmp_path: Path) -> None:
    # `git diff -U0` of a duplicated block: the insertion stands in front of its twin, where its lines already are.
    before = "def test():\n    check(1)\n    check(2)\n    done()\n"
    after = "def test():\n    check(1)\n    check(2)\n    check(1)\n    check(2)\n    done()\n"
    (tmp_path / "t.py").write_text(before)
    patch = "--- a/t.py\n+++ b/t.py\n@@ -1,0 +2,2 @@ def test():\n+    check(1)\n+    check(2)\n"

    apply_patch(tmp_path, patch)

    assert (tmp_path / "t.py").read_text() == after
