"""Codex `@@` anchors: a chain of lines (a class, then a method in it) that says where a chunk goes, each looked for
after the one before it, with unicode punctuation folded; a line that only starts with an anchor matches when none
equals it."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.patch.haystack import Haystack
from sandbox.patch.textfile import fold


@dataclass
class AnchorMissing:
    """A hunk's chain of anchors leads to no line of the file."""

    anchor: str
    """The first anchor of the chain that leads nowhere."""
    alone: int | None = None
    """0-based index of the first line it matches on its own, when it does but not after the anchor before it."""
    previous: str = ""
    previous_at: int | None = None
    """0-based index of the first line the anchors before it lead to."""


def anchor_positions(hay: Haystack, anchors: list[str]) -> list[int]:
    """Where a chain of Codex `@@` anchors leads: each anchor is looked for after the one before it."""
    return _follow(hay, anchors)[0]


def anchor_missing(hay: Haystack, anchors: list[str]) -> AnchorMissing:
    """Which anchor of a chain that leads nowhere breaks it, and whether it is in the file at all (above the
    anchor before it: the anchors are out of order, or name the wrong class)."""
    positions, broken, hits = _follow(hay, anchors)
    assert not positions
    if broken == 0 or not hits:
        return AnchorMissing(anchors[broken])
    before = _follow(hay, anchors[:broken])[0]
    return AnchorMissing(anchors[broken], hits[0], anchors[broken - 1], before[0] if before else None)


def _follow(hay: Haystack, anchors: list[str]) -> tuple[list[int], int, list[int]]:
    """(where the chain leads, the index of the anchor where it stopped leading anywhere, that anchor's own hits)."""
    view = hay.view("unicode", fold)
    positions: list[int] | None = None
    for index, anchor in enumerate(anchors):
        want = fold(anchor)
        hits = [i for i, line in enumerate(view) if line == want] or [
            i for i, line in enumerate(view) if want and line.startswith(want)
        ]
        if positions is None:
            positions = hits
        else:
            positions = sorted({next((h for h in hits if h > p), -1) for p in positions} - {-1})
        if not positions:
            return [], index, hits
    return positions or [], len(anchors), []
