"""The matching ladder: where in a file a hunk's old lines (context and removed lines) are.

Per hunk, in order: exact at the stated line, exact at the nearest offset, ignoring trailing whitespace, ignoring
surrounding whitespace, with unicode punctuation folded, then the same with up to one and two outer context lines
dropped (GNU patch's fuzz). The first rung with any match decides; two matches that are equally good are refused.
A fuzz match must stay in the hunk's function (`sandbox.patch.scope`); one that would not is refused as a
`ScopeMismatch` naming where it would have gone.

Some hunks are pinned to an edge of the file, as in `git apply` (apply.c `match_beginning` / `match_end`): one with
no leading context that starts at line 1 begins the file, one with no trailing context ends it (not for a hunk
without any context, a `-U0` diff's, where neither can be told). There the pinned position wins over other places
that match as well. When the edge does not match, the hunk goes where its lines are, at the level they match
with (`git apply` would refuse it): a model's hunk often stops right after its change, in the middle of the file,
so a hunk whose lines are at its stated line stays there.
A hunk marked `\\ No newline at end of file` ends the file: found only where lines follow, it is a `fuzz1` match
(the file's edge is the context it lost), and when it changes the last line or the final newline, nowhere else
will do (`EdgeMismatch` otherwise), since that change would be lost there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from sandbox.patch.anchors import AnchorMissing, anchor_missing, anchor_positions
from sandbox.patch.haystack import Haystack
from sandbox.patch.models import MatchLevel
from sandbox.patch.ops import Hunk
from sandbox.patch.scope import already_applied, dropped_scope_line, heading, outside_heading
from sandbox.patch.textfile import clip, fold

Comparator = tuple[MatchLevel, Callable[[str], str] | None]
COMPARATORS: tuple[Comparator, ...] = (
    ("exact", None),
    ("trailing_ws", str.rstrip),
    ("surrounding_ws", str.strip),
    ("unicode", fold),
)


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
    starts: list[int] = field(default_factory=list)
    """Where the hunk would be placed at each of `positions` (the index of its first matched line, or where an
    insertion goes), when the ladder found them as equals (not a rival's note): the hunks after it may leave only
    one of them possible (`sandbox.patch.hunks`)."""
    placed: Match | None = None
    """The hunk's match at `starts[0]`; at another start it is the same but for `start`."""

    def match_at(self, start: int) -> Match:
        assert self.placed is not None
        return replace(self.placed, start=start)


@dataclass
class ScopeMismatch:
    """Only a reduced-context match was found, and it would move the edit out of its function."""

    position: int
    """0-based index where the reduced needle matched."""
    reason: str
    window: int = 0
    """0-based index where the whole hunk would start there (to show the closest lines)."""


@dataclass
class EdgeMismatch:
    """The hunk must end the file (it changes the last line or the final newline: `\\ No newline at end of file`),
    and its lines were found only where other lines follow them."""

    position: int
    """0-based index of the nearest place where its lines were found (or where an insertion would go)."""
    reason: str


Located = Match | Ambiguity | AnchorMissing | ScopeMismatch | EdgeMismatch | None


def locate(hay: Haystack, hunk: Hunk, origin: int | None, lo: int, *, first: bool = False) -> Located:
    """Find the hunk at or after index `lo`; `origin` is the expected index (stated line plus earlier drift).

    `first`: only the earliest place matters (the look-ahead of `sandbox.patch.hunks._only_room`, for a hunk without
    line numbers), so an ambiguous result may list only the first places: a search stops after two matches instead
    of collecting all of a long file's."""
    found = _locate(hay, hunk, origin, lo, first)
    if isinstance(found, Match) and origin is not None and _as_if_resent(hunk, found, origin):
        done = already_applied(hay.lines, hunk.new_lines, origin)
        if done is not None:
            return ScopeMismatch(found.start, done, origin)
    return found


def _as_if_resent(hunk: Hunk, found: Match, origin: int) -> bool:
    """Whether the match is one that the same patch, sent again after it applied, would get: with reduced context,
    or moved off its stated line (a hunk without context on one side, pinned to that edge, still finds its context
    lines there). Then its new lines standing at its stated line refuse it (`already_applied`). A hunk that adds
    nothing but blank lines, or whose lines differ from its old ones only in whitespace or the final newline, is
    never taken for one; nor is an insertion (no old lines): `git diff -U0` puts a duplicated block's insertion in
    front of its twin, where its new lines already stand."""
    if found.trim_front or found.trim_back:
        return True
    if not hunk.old_lines or found.start == origin:
        return False
    if not any(line.op == "+" and line.text.strip() for line in hunk.lines):
        return False
    return [line.strip() for line in hunk.new_lines] != [line.strip() for line in hunk.old_lines]


def _locate(hay: Haystack, hunk: Hunk, origin: int | None, lo: int, first: bool = False) -> Located:
    found = _place(hay, hunk, origin, lo, first, hunk.anchors)
    if hunk.soft_anchors and not isinstance(found, Match):
        # a unified header's text (`@@ class B:`) that names no line, or one the hunk does not follow: the hunk is
        # placed by its context alone, as it was before the text was read as an anchor
        return _place(hay, hunk, origin, lo, first, [])
    return found


def _place(hay: Haystack, hunk: Hunk, origin: int | None, lo: int, first: bool, named: list[str]) -> Located:
    anchors: list[int] | None = None
    if named:
        anchors = anchor_positions(hay, named)
        if not anchors:
            return anchor_missing(hay, named)
    old = hunk.old_lines
    if not old:
        return _insertion(hay, hunk, origin, lo, anchors)
    lines = hunk.lines  # the usual hunk has context at both ends and no `\\ No newline`: pinned to no edge
    pins = None if lines[0][0] == " " == lines[-1][0] and hunk.new_eof_newline is None else pins_of(hunk)
    if (
        origin is not None
        and lo <= origin
        and hay.lines[origin : origin + len(old)] == old
        and (
            pins is None
            or hunk.new_eof_newline is None  # pinned by its shape only: its stated line wins (see the module doc)
            or _edge_start(pins, len(old), 0, 0, len(hay.lines)) == origin
        )
    ):
        return _match(hunk, origin, len(old), 0, 0, "exact", "exact")
    front, back = _context_edges(hunk)
    context = heading(hunk.header, named)
    tried: set[tuple[int, int]] = set()
    mismatch: ScopeMismatch | None = None
    for fuzz in (0, 1, 2):
        f, b = min(fuzz, front), min(fuzz, back)
        if (f, b) in tried or len(old) - f - b <= 0:
            continue
        tried.add((f, b))
        needle = old[f : len(old) - b]
        expected = None if origin is None else origin + f
        edge = None if pins is None else _edge_start(pins, len(needle), f, b, len(hay.lines))
        for index, (comparator, norm) in enumerate(COMPARATORS):
            level: MatchLevel = comparator if fuzz == 0 else ("fuzz1" if fuzz == 1 else "fuzz2")
            chosen: list[int] | None = None
            if edge is not None and edge >= lo and hay.matches_at(needle, norm, edge):
                problem = _scope_problem(hay.lines, old, f, b, edge, norm, context) if f or b else None
                if problem is None:
                    chosen = [edge]
                elif mismatch is None:
                    mismatch = ScopeMismatch(edge, problem, max(edge - f, 0))
            if pins is not None and pins[2]:
                if chosen is None:
                    continue  # it must end the file: no other place will do
                level = _moved(level, chosen[0], expected)
                return _match(hunk, chosen[0], len(needle), f, b, level, comparator)
            found = _search(hay, hunk, needle, comparator, norm, lo, anchors) if first and not (f or b) else None
            if found is None:
                found = hay.find_all(needle, comparator, norm, lo)
            if found and (f or b):
                kept = [p for p in found if _scope_problem(hay.lines, old, f, b, p, norm, context) is None]
                if not kept and mismatch is None:
                    near = found[0] if origin is None else min(found, key=lambda p: abs(p - origin - f))
                    reason = _scope_problem(hay.lines, old, f, b, near, norm, context) or ""
                    mismatch = ScopeMismatch(near, reason, max(near - f, 0))
                found = kept
            if chosen is None:
                if not found:
                    continue
                chosen = _choose(found, expected, anchors, len(hay.lines) - len(needle) if hunk.at_eof else None)
                if chosen is None:
                    continue
            if len(chosen) > 1:
                placed = _match(hunk, chosen[0], len(needle), f, b, level, comparator)
                return Ambiguity(chosen, level, starts=chosen, placed=placed)
            if expected is not None and chosen[0] != expected:
                looser = COMPARATORS[index + 1 :]
                fits = _rival_filter(hay.lines, old, f, b, context, found if edge == chosen[0] else None)
                rival = _nearer_rival(hay, needle, lo, expected, chosen[0], looser, fits)
                if rival is not None:
                    return rival
                level = "offset" if level == "exact" else level
            if (
                fuzz == 0
                and hunk.new_eof_newline is not None
                and chosen[0] != edge
                and not _edge_matches(hay, needle, edge, lo, index)
            ):
                level = "fuzz1"  # marked as the end of the file but found only where lines follow: context it lost
            return _match(hunk, chosen[0], len(needle), f, b, level, comparator)
    if pins is not None and pins[2]:
        return _edge_mismatch(hay, old, origin, lo) or mismatch
    return mismatch


def _search(
    hay: Haystack,
    hunk: Hunk,
    needle: list[str],
    comparator: MatchLevel,
    norm: Callable[[str], str] | None,
    lo: int,
    anchors: list[int] | None,
) -> list[int]:
    """The matches `_choose` needs to tell the earliest place (no line number, no fuzz): the first two after the
    first anchor, and the end of the file's place for a hunk marked `*** End of File` (it wins there)."""
    found = hay.find_all(needle, comparator, norm, max(lo, min(anchors)) if anchors else lo, limit=2)
    end = len(hay.lines) - len(needle)
    if hunk.at_eof and end >= lo and end not in found and hay.matches_at(needle, norm, end):
        found.append(end)
    return found


def _moved(level: MatchLevel, start: int, expected: int | None) -> MatchLevel:
    return "offset" if level == "exact" and expected is not None and start != expected else level


def _edge_matches(hay: Haystack, needle: list[str], edge: int | None, lo: int, index: int) -> bool:
    """Whether the needle matches at its pinned edge under a comparator looser than `COMPARATORS[index]`."""
    if edge is None or edge < lo:
        return False
    return any(hay.matches_at(needle, norm, edge) for _, norm in COMPARATORS[index + 1 :])


def _rival_filter(
    lines: list[str], old: list[str], f: int, b: int, context: str, strict: list[int] | None
) -> Callable[[int], bool] | None:
    """Which looser matches count as rivals: those that keep the hunk in its function (fuzz), and, when the match
    is at the hunk's pinned edge, not the places that match as strictly (the edge wins over those)."""
    fits = partial(_fits, lines, old, f, b, context) if f or b else None
    if not strict:
        return fits
    taken = set(strict)
    if fits is None:
        return lambda p: p not in taken
    return lambda p: p not in taken and fits(p)


Pins = tuple[bool, bool, bool]
"""(begins the file, ends the file, no place but the end will do)."""


def pins_of(hunk: Hunk) -> Pins | None:
    """The edges of the file a hunk is pinned to, or None (the usual hunk: context lines at both ends)."""
    lines = hunk.lines
    marked = hunk.new_eof_newline is not None  # `\\ No newline at end of file` (it sets both sides)
    start = hunk.old_start == 0 and lines[0].op != " "
    end = hunk.old_start is not None and lines[-1].op != " "
    if (start or end) and all(line.op != " " for line in lines):
        start = end = False  # no context at all (`-U0`): nothing tells where it must be
    if not (start or end or marked):
        return None
    # the hunk changes the file's last line or its final newline: that happens at the end of the file or nowhere
    hard = marked and (hunk.old_eof_newline != hunk.new_eof_newline or lines[-1].op != " ")
    return start, end or marked, hard


def _edge_start(pins: Pins, size: int, f: int, b: int, total: int) -> int | None:
    """Where a needle of `size` lines (the hunk less `f` leading and `b` trailing lines) must start to sit at the
    hunk's pinned edges; None when no place does. A hunk that must end the file does, whether or not it also
    begins it."""
    begins, ends, hard = pins
    at_end = total - size - b
    if begins and ends and not hard:
        return f if f == at_end else None
    return f if begins and not hard else at_end


def _edge_mismatch(hay: Haystack, old: list[str], origin: int | None, lo: int) -> EdgeMismatch | None:
    """Why a hunk that must end the file was not placed, when its lines are found where other lines follow them."""
    for comparator, norm in COMPARATORS:
        found = hay.find_all(old, comparator, norm, lo)
        if found:
            near = found[0] if origin is None else min(found, key=lambda p: abs(p - origin))
            reason = (
                "its last line is marked `\\ No newline at end of file`, so its lines end the file, but they were "
                f"found only at line {near + 1}, where {len(hay.lines) - near - len(old)} more line(s) follow them"
            )
            return EdgeMismatch(near, reason)
    return None


def _fits(lines: list[str], old: list[str], f: int, b: int, context: str, start: int) -> bool:
    return _scope_problem(lines, old, f, b, start, fold, context) is None


def _scope_problem(
    lines: list[str], old: list[str], f: int, b: int, start: int, norm: Callable[[str], str] | None, context: str
) -> str | None:
    """Why a fuzz match at `start` would move the edit out of its function; None when it stays in it."""
    dropped = dropped_scope_line(lines, old, f, b, start, norm)
    if dropped is not None:
        return f"that drops its context line {clip(dropped)!r}, which is not there"
    if context and outside_heading(lines, start, context):
        return f"that is not inside {clip(context)!r}, the function its header names"
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
        start = min(max(origin, lo), len(hay.lines))
        if hunk.new_eof_newline is not None and start != len(hay.lines):  # its last added line ends the file
            after = len(hay.lines) - start
            return EdgeMismatch(
                start,
                "its last line is marked `\\ No newline at end of file`, so it adds the file's last line, but it "
                f"goes in at line {start + 1}, and {after} more line(s) follow it",
            )
        return _match(hunk, start, 0, 0, 0, "exact", "exact")
    if anchors is not None:
        if len(anchors) > 1:
            starts = [max(a + 1, lo) for a in anchors]
            return Ambiguity(anchors, "exact", starts=starts, placed=Match(starts[0], 0))
        return Match(max(anchors[0] + 1, lo), 0)
    return Match(len(hay.lines), 0)
