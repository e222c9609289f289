"""The engine plans each section as soon as it is parsed; what it reports is what it reported when the patch was
parsed whole first: a malformed patch is refused as malformed, whatever planning found before."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch
from sandbox.patch.ops import MalformedPatch
from sandbox.patch.parse import iter_patch, parse_patch

GOOD = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n"
OUTSIDE = "--- a/../x.txt\n+++ b/../x.txt\n@@ -1 +1 @@\n-a\n+b\n"
MALFORMED = "--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-a\noops\n+b\n"


def test_sections_are_parsed_one_at_a_time_so_a_later_malformation_comes_after_the_earlier_sections() -> None:
    sections = iter_patch(GOOD + MALFORMED)
    assert next(sections).path.written == "a/f.txt"
    with pytest.raises(MalformedPatch, match="patch line 10"):
        next(sections)


def test_a_path_refused_by_planning_waits_for_the_parse_and_the_malformation_is_reported(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n")
    with pytest.raises(PatchError, match=r"'\.\.' is refused"):
        apply_patch(tmp_path, OUTSIDE)
    with pytest.raises(MalformedPatch, match="'oops' is not a hunk line"):
        apply_patch(tmp_path, OUTSIDE + MALFORMED)
    assert (tmp_path / "f.txt").read_text() == "a\n"


def test_a_malformed_patch_for_a_missing_workspace_is_refused_as_malformed(tmp_path: Path) -> None:
    with pytest.raises(MalformedPatch, match="'oops' is not a hunk line"):
        apply_patch(tmp_path / "absent", GOOD + MALFORMED)


def test_the_whole_patch_parsed_at_once_is_a_list_and_a_patch_without_sections_is_refused() -> None:
    assert [s.path.written for s in parse_patch(GOOD + GOOD.replace("f.txt", "g.txt"))] == ["a/f.txt", "a/g.txt"]
    with pytest.raises(MalformedPatch, match="no file changes"):
        parse_patch("just prose\n")
    with pytest.raises(MalformedPatch, match="no file changes"):
        apply_patch(Path("."), "just prose\n")
