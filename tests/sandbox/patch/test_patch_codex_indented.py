"""A Codex envelope indented as a whole (pasted from a Markdown list item) applies without that indentation; one
whose lines are indented less than its `*** Begin Patch` line is refused saying so, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch


def test_an_envelope_indented_as_a_whole_applies_as_if_it_were_not(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n\ny\n")
    patch = "  *** Begin Patch\n  *** Update File: a.txt\n  @@\n   x\n\n  -y\n  +Y\n  *** End Patch\n"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "a.txt").read_text() == "x\n\nY\n"


def test_an_envelope_with_a_line_indented_less_than_its_begin_line_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\ny\n")
    patch = "  *** Begin Patch\n  *** Update File: a.txt\n@@\n   x\n  -y\n  +Y\n  *** End Patch\n"
    with pytest.raises(PatchError, match=r"patch line 3: the envelope is indented \(2 character\(s\)"):
        apply_patch(tmp_path, patch)
    assert (tmp_path / "a.txt").read_text() == "x\ny\n"
