"""The matching ladder: where in a file a hunk's old lines (context and removed lines) are.

Per hunk, in order: exact at the stated line, exact at the nearest offset, ignoring trailing whitespace, ignoring
surrounding whitespace, with unicode punctuation folded, then the same with up to one and two outer context lines
dropped (GNU patch's fuzz). The first rung with any match decides; two matches that are equally good are refused.
A fuzz match must stay in the hunk's function (`sandbox.patch.scope`); one that would not is refused as a
`ScopeMismatch` naming where it would have gone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sandbox.patch.models import MatchLevel
from sandbox.patch.ops import Hunk
from sandbox.patch.scope import dropped_scope_line, heading, outside_heading
from sandbox.patch.textfile import fold

Comparator = tuple[MatchLevel, Callable[[str], str] | None]
COMPARATORS: tuple[Comparator, ...] = (
    ("exact", None),
    ("trailing_ws", str.rstrip),
    ("surrounding_ws", str.strip),
    ("unicode", fold),
)


class Haystack:
    """A file's lines with their normalised forms, computed once per comparator."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._views: dict[MatchLevel, list[str]] = {"exact": lines}

    def view(self, level: MatchLevel, norm: Callable[[str], str] | None) -> list[str]:
        if level not in self._views:
            assert norm is not None
            self._views[level] = [norm(line) for line in self.lines]
        return self._views[level]

    def find_all(self, needle: list[str], level: MatchLevel, norm: Callable[[str], str] | None, lo: int) -> list[int]:
        """Every start index >= lo where the needle's lines equal the file's lines under this comparator."""
        view = self.view(level, norm)
        want = needle if norm is None else [norm(line) for line in needle]
        size, last = len(want), len(view) - len(want)
        first, found, pos = want[0], [], lo
        while pos <= last:
            try:
                pos = view.index(first, pos, last + 1)
            except ValueError:
                break
            if view[pos : pos + size] == want:
                found.append(pos)
            pos += 1
        return found


@dataclass
class Match:
    start: int
    """Index of the first matched old line in the file."""
    length: int
    """How many file lines the matched old lines cover."""
    trim_front: int = 0
    """Leading context lines of the hunk that were not matched (fuzz)."""
    trim_back: int = 0
    level: MatchLevel = "exact"
    comparator: MatchLevel = "exact"
    offset: int = 0
    """Lines between the stated position and where the hunk was found."""


@dataclass
class Ambiguity:
    positions: list[int]
    """0-based indexes of the equally good matches."""
    level: MatchLevel
    note: str = ""
    """Why the matches count as equally good, when it is not plain."""


@dataclass
class AnchorMissing:
    anchor: str


@dataclass
class ScopeMismatch:
    """Only a reduced-context match was found, and it would move the edit out of its function."""

    position: int
    """0-based index where the reduced needle matched."""
    reason: str
    window: int = 0
    """0-based index where the whole hunk would start there (to show the closest lines)."""


Located = Match | Ambiguity | AnchorMissing | ScopeMismatch | None


def locate(hay: Haystack, hunk: Hunk, origin: int | None, lo: int) -> Located:
    """Find the hunk at or after index `lo`; `origin` is the expected index (stated line plus earlier drift)."""
    anchors: list[int] | None = None
    if hunk.anchors:
        anchors = anchor_positions(hay, hunk.anchors)
        if not anchors:
            return AnchorMissing(hunk.anchors[-1])
    old = hunk.old_lines
    if not old:
        return _insertion(hay, hunk, origin, lo, anchors)
    if origin is not None and lo <= origin and hay.lines[origin : origin + len(old)] == old:
        return _match(hunk, origin, len(old), 0, 0, "exact", "exact")
    front, back = _context_edges(hunk)
    context = heading(hunk.header, hunk.anchors)
    tried: set[tuple[int, int]] = set()
    mismatch: ScopeMismatch | None = None
    for fuzz in (0, 1, 2):
        f, b = min(fuzz, front), min(fuzz, back)
        if (f, b) in tried or len(old) - f - b <= 0:
            continue
        tried.add((f, b))
        needle = old[f : len(old) - b]
        for index, (comparator, norm) in enumerate(COMPARATORS):
            found = hay.find_all(needle, comparator, norm, lo)
            if found and (f or b):
                kept = [p for p in found if _scope_problem(hay.lines, old, f, b, p, norm, context) is None]
                if not kept and mismatch is None:
                    near = found[0] if origin is None else min(found, key=lambda p: abs(p - origin - f))
                    reason = _scope_problem(hay.lines, old, f, b, near, norm, context) or ""
                    mismatch = ScopeMismatch(near, reason, max(near - f, 0))
                found = kept
            if not found:
                continue
            expected = None if origin is None else origin + f
            chosen = _choose(found, expected, anchors, len(hay.lines) - len(needle) if hunk.at_eof else None)
            if chosen is None:
                continue
            level: MatchLevel = comparator if fuzz == 0 else ("fuzz1" if fuzz == 1 else "fuzz2")
            if len(chosen) > 1:
                return Ambiguity(chosen, level)
            if expected is not None and chosen[0] != expected:
                looser = COMPARATORS[index + 1 :]
                fits = partial(_fits, hay.lines, old, f, b, context) if f or b else None
                rival = _nearer_rival(hay, needle, lo, expected, chosen[0], looser, fits)
                if rival is not None:
                    return rival
                level = "offset" if level == "exact" else level
            return _match(hunk, chosen[0], len(needle), f, b, level, comparator)
    return mismatch


def _fits(lines: list[str], old: list[str], f: int, b: int, context: str, start: int) -> bool:
    return _scope_problem(lines, old, f, b, start, fold, context) is None


def _scope_problem(
    lines: list[str], old: list[str], f: int, b: int, start: int, norm: Callable[[str], str] | None, context: str
) -> str | None:
    """Why a fuzz match at `start` would move the edit out of its function; None when it stays in it."""
    dropped = dropped_scope_line(lines, old, f, b, start, norm)
    if dropped is not None:
        return f"that drops its context line {dropped!r}, which is not there"
    if context and outside_heading(lines, start, context):
        return f"that is not inside {context!r}, the function its header names"
    return None


def _nearer_rival(
    hay: Haystack,
    needle: list[str],
    lo: int,
    expected: int,
    chosen: int,
    looser: tuple[Comparator, ...],
    fits: Callable[[int], bool] | None = None,
) -> Ambiguity | None:
    """A looser match nearer the stated line than the stricter match makes the place unclear: text and position
    disagree (a block repeated elsewhere, while the hunk's own place changed in whitespace)."""
    distance = abs(chosen - expected)
    for comparator, norm in looser:
        nearer = [p for p in hay.find_all(needle, comparator, norm, lo) if abs(p - expected) < distance]
        nearer = [p for p in nearer if fits is None or fits(p)]
        if nearer:
            rival = min(nearer, key=lambda p: abs(p - expected))
            note = (
                f"its lines match at line {chosen + 1}, but also at line {rival + 1} ({comparator} match), which is "
                f"nearer the line the hunk states ({expected + 1})"
            )
            return Ambiguity(sorted([chosen, rival]), comparator, note)
    return None


def _match(hunk: Hunk, start: int, length: int, f: int, b: int, level: MatchLevel, comparator: MatchLevel) -> Match:
    offset = 0 if hunk.old_start is None else start - f - hunk.old_start
    return Match(start, length, f, b, level, comparator, offset)


def _context_edges(hunk: Hunk) -> tuple[int, int]:
    ops = [line.op for line in hunk.lines]
    front = next((i for i, op in enumerate(ops) if op != " "), len(ops))
    back = next((i for i, op in enumerate(reversed(ops)) if op != " "), len(ops))
    return front, back


def _choose(
    found: list[int], expected: int | None, anchors: list[int] | None, eof_start: int | None
) -> list[int] | None:
    """The best of the matches: one index, several equally good ones, or None when none is acceptable."""
    if eof_start is not None and eof_start in found:
        return [eof_start]
    if expected is not None:
        best = min(abs(pos - expected) for pos in found)
        return [pos for pos in found if abs(pos - expected) == best]
    if anchors is not None:
        after = sorted({next((pos for pos in found if pos >= a), -1) for a in anchors} - {-1})
        return after or None
    return found


def _insertion(hay: Haystack, hunk: Hunk, origin: int | None, lo: int, anchors: list[int] | None) -> Located:
    """A hunk with only added lines: at its stated line, after its anchor, or at the end of the file."""
    if origin is not None:
        return _match(hunk, min(max(origin, lo), len(hay.lines)), 0, 0, 0, "exact", "exact")
    if anchors is not None:
        if len(anchors) > 1:
            return Ambiguity(anchors, "exact")
        return Match(max(anchors[0] + 1, lo), 0)
    return Match(len(hay.lines), 0)


def anchor_positions(hay: Haystack, anchors: list[str]) -> list[int]:
    """Where a chain of Codex `@@` anchors leads: each anchor is looked for after the one before it."""
    view = hay.view("unicode", fold)
    positions: list[int] | None = None
    for anchor in anchors:
        want = fold(anchor)
        hits = [i for i, line in enumerate(view) if line == want] or [
            i for i, line in enumerate(view) if want and line.startswith(want)
        ]
        if positions is None:
            positions = hits
        else:
            positions = sorted({next((h for h in hits if h > p), -1) for p in positions} - {-1})
        if not positions:
            return []
    return positions or []
