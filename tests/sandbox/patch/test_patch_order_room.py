"""A Codex chunk whose lines match at several places is placed at the one place that leaves room for the chunks
after it (a file's chunks apply in order, without overlapping); where several places or none do, it is refused as
ambiguous, naming the lines, and nothing is written."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch
from sandbox.patch.hunks import LOOKAHEAD_HUNKS


def _envelope(chunks: str) -> str:
    return f"*** Begin Patch\n*** Update File: f.txt\n{chunks}*** End Patch\n"


@pytest.mark.parametrize(
    ("before", "chunks", "after"),
    [
        pytest.param("x\ny\nx\n", "@@\n-x\n+X1\n@@\n-x\n+X2\n", "X1\ny\nX2\n", id="two-twins"),
        pytest.param("x\nx\nx\n", "@@\n-x\n+1\n@@\n-x\n+2\n@@\n-x\n+3\n", "1\n2\n3\n", id="three-in-a-row"),
        pytest.param(
            "x\ny\nx\ny\n", "@@\n-x\n+X1\n@@\n y\n+after\n@@\n-x\n+X2\n", "X1\ny\nafter\nX2\ny\n", id="chained"
        ),
        pytest.param(
            "def a():\n    pass\ndef b():\n    pass\n",
            "@@\n-    pass\n+    return 1\n@@ def b():\n-    pass\n+    return 2\n",
            "def a():\n    return 1\ndef b():\n    return 2\n",
            id="a-later-anchor-leaves-one-place",
        ),
    ],
)
def test_the_only_place_that_leaves_room_for_the_later_chunks_is_taken(
    tmp_path: Path, before: str, chunks: str, after: str
) -> None:
    (tmp_path / "f.txt").write_text(before)
    apply_patch(tmp_path, _envelope(chunks))
    assert (tmp_path / "f.txt").read_text() == after


@pytest.mark.parametrize(
    ("before", "chunks", "problems"),
    [
        pytest.param("x\ny\nx\n", "@@\n-x\n+X\n", 1, id="alone"),
        pytest.param("x\ny\nx\nz\n", "@@\n-x\n+X\n@@\n-z\n+Z\n", 1, id="both-places-leave-room"),
        pytest.param("x\ny\nx\n", "@@\n-x\n+X\n@@\n-q\n+Q\n", 2, id="a-later-chunk-found-nowhere"),
    ],
)
def test_a_chunk_still_ambiguous_is_refused_with_its_places(
    tmp_path: Path, before: str, chunks: str, problems: int
) -> None:
    (tmp_path / "f.txt").write_text(before)
    with pytest.raises(
        PatchError, match=rf"{problems} problem\(s\)[\s\S]*hunk 1 of \d.*match equally well at lines 1, 3"
    ):
        apply_patch(tmp_path, _envelope(chunks))
    assert (tmp_path / "f.txt").read_text() == before


def test_the_look_ahead_is_bounded_and_a_place_it_cannot_rule_out_stays_possible(tmp_path: Path) -> None:
    """`x` then N lines, twice; the chunks `-x`, the N lines, `-x`: only the first `x` leaves room for the last
    chunk, which is N + 1 chunks on. Within the look-ahead that is found; beyond it the first chunk is refused."""

    def attempt(n: int) -> str:
        block = ["x", *[f"l{i}" for i in range(n)]]
        (tmp_path / "f.txt").write_text("\n".join(block * 2) + "\n")
        chunks = "@@\n-x\n+X1\n" + "".join(f"@@\n-l{i}\n+L{i}\n" for i in range(n)) + "@@\n-x\n+X2\n"
        apply_patch(tmp_path, _envelope(chunks))
        return (tmp_path / "f.txt").read_text()

    within = LOOKAHEAD_HUNKS - 1
    assert attempt(within).split("\n")[: within + 2] == ["X1", *[f"L{i}" for i in range(within)], "X2"]
    beyond = LOOKAHEAD_HUNKS + 1
    with pytest.raises(PatchError, match=rf"hunk 1 of {beyond + 2} .*match equally well at lines 1, {beyond + 2}"):
        attempt(beyond)
    assert "X" not in (tmp_path / "f.txt").read_text()


def test_when_the_look_ahead_s_searches_run_out_the_chunk_stays_ambiguous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sandbox.patch.hunks as hunks

    monkeypatch.setattr(hunks, "LOOKAHEAD_SEARCHES", 1)
    monkeypatch.setattr(hunks, "LOOKAHEAD_LINES", 0)
    (tmp_path / "f.txt").write_text("x\ny\nx\n")
    with pytest.raises(PatchError, match=r"hunk 1 of 2 .*match equally well at lines 1, 3"):
        apply_patch(tmp_path, _envelope("@@\n-x\n+X1\n@@\n-x\n+X2\n"))
    assert (tmp_path / "f.txt").read_text() == "x\ny\nx\n"


def test_chunks_matching_every_line_of_a_long_file_are_refused_as_ambiguous_within_seconds(tmp_path: Path) -> None:
    # a 200,000-line file of one repeated line: each look-ahead search found (and kept) every one of its matches
    before = "    },\n" * 200_000
    (tmp_path / "data.json").write_text(before)
    chunks = "@@\n     },\n-    },\n+    }\n     },\n" * 20
    patch = f"*** Begin Patch\n*** Update File: data.json\n{chunks}*** End Patch\n"
    started = time.process_time()
    with pytest.raises(PatchError, match=r"20 problem\(s\)[\s\S]*hunk 1 of 20 .*match equally well at lines 1, 2, 3"):
        apply_patch(tmp_path, patch, check_syntax=False)
    assert time.process_time() - started < 5  # ~1 s; 10 to 13 s of CPU before the look-ahead stopped early
    assert (tmp_path / "data.json").read_text() == before
