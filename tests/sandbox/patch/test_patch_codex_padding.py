"""Codex trims the whitespace around its envelope's markers and section headers, and accepts the bare `<<'EOF'`
heredoc line a model sends as the argument of an `apply_patch` it runs without a shell: the same patches apply here,
and what stays malformed is still refused with the line that is wrong, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

UPDATE = "*** Update File: a.txt\n@@\n-one\n+two\n"


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param(f"*** Begin Patch\n  {UPDATE}*** End Patch\n", id="header-padded"),
        pytest.param(f"*** Begin Patch\n\t{UPDATE}*** End Patch\n", id="header-tab-padded"),
        pytest.param(f"*** Begin Patch \n{UPDATE} *** End Patch\n", id="end-padded"),
        pytest.param(f" *** Begin Patch\n{UPDATE}*** End Patch \n", id="begin-padded"),
        pytest.param(f"  *** Begin Patch\n {UPDATE}  *** End Patch  \n\n", id="all-padded-differently"),
        pytest.param(f"<<'EOF'\n*** Begin Patch\n{UPDATE}*** End Patch\nEOF\n", id="bare-heredoc-quoted"),
        pytest.param(f'<<"EOF"\n*** Begin Patch\n{UPDATE}*** End Patch\nEOF\n', id="bare-heredoc-double-quoted"),
        pytest.param(f"<<EOF\n*** Begin Patch\n{UPDATE} *** End Patch\nEOF\n", id="bare-heredoc-padded-end"),
        pytest.param(f"apply_patch <<'PATCH'\n *** Begin Patch\n{UPDATE}*** End Patch\nPATCH\n", id="heredoc-padded"),
    ],
)
def test_padded_markers_and_headers_apply_as_codex_applies_them(tmp_path: Path, patch: str) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    result = apply_patch(tmp_path, patch)
    assert result.applied
    assert (tmp_path / "a.txt").read_text() == "two\n"


def test_a_padded_end_after_an_added_file_ends_it_and_a_padded_header_starts_the_next_section(tmp_path: Path) -> None:
    (tmp_path / "gone.txt").write_text("bye\n")
    patch = "*** Begin Patch \n*** Add File: new.txt\n+hi\n  *** Delete File: gone.txt\n *** End Patch"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "new.txt").read_text() == "hi\n"
    assert not (tmp_path / "gone.txt").exists()


def test_a_padded_end_patch_line_inside_a_hunk_stays_a_context_line(tmp_path: Path) -> None:
    """Only the envelope's last line is its end: a file line `*** End Patch` is matched as context before it."""
    (tmp_path / "notes.md").write_text("*** End Patch\nold\n")
    patch = "*** Begin Patch\n*** Update File: notes.md\n@@\n *** End Patch\n-old\n+new\n*** End Patch\n"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "notes.md").read_text() == "*** End Patch\nnew\n"


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param(
            f"*** Begin Patch\n{UPDATE}",
            r"the patch ends without `\*\*\* End Patch`",
            id="no-end-at-all",
        ),
        pytest.param(
            f"<<'EOF'\n*** Begin Patch\n{UPDATE}*** End Patch\nEOF\nmore\n",
            r"patch line 9: unexpected text after `\*\*\* End Patch`: 'more'",
            id="text-after-the-heredoc",
        ),
        pytest.param(
            "*** Begin Patch\n  *** Rename File: a.txt\n*** End Patch\n",
            r"patch line 2: expected `\*\*\* Add File:`.*got '  \*\*\* Rename File: a.txt'",
            id="padded-unknown-header",
        ),
        pytest.param(
            f"<<'EOF'\nnot a patch\n*** Begin Patch\n{UPDATE}*** End Patch\nEOF\n",
            r"there is text before `\*\*\* Begin Patch`",
            id="text-between-heredoc-and-begin",
        ),
    ],
)
def test_what_stays_malformed_is_refused_and_nothing_is_written(tmp_path: Path, patch: str, message: str) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    with pytest.raises(PatchError, match=message):
        apply_patch(tmp_path, patch)
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


@pytest.mark.parametrize(
    "context",
    [" *** Begin Patch", "   *** Begin Patch", " *** Begin Patch\n *** End Patch"],
    ids=["flush", "indented", "both"],
)
def test_a_unified_diff_whose_context_shows_the_envelope_markers_is_a_unified_diff(
    tmp_path: Path, context: str
) -> None:
    """A file that documents the Codex format (skillbank's own docs) holds `*** Begin Patch` lines: a diff of it
    has them as context lines, and was refused as 'text before `*** Begin Patch`'."""
    lines = [line[1:] for line in context.split("\n")]
    (tmp_path / "f.md").write_text("\n".join(["a", *lines, "b", "c"]) + "\n")
    n = len(lines) + 3
    patch = f"--- a/f.md\n+++ b/f.md\n@@ -1,{n} +1,{n} @@\n a\n{context}\n b\n-c\n+C\n"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "f.md").read_text() == "\n".join(["a", *lines, "b", "C"]) + "\n"
