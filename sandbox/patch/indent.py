"""Re-indenting the added lines of a hunk matched with whitespace tolerance, level by level.

A model writes a YAML or JS patch with 2 spaces a level for a file indented with 4 (or the reverse) constantly.
The hunk's context lines match once surrounding whitespace is ignored, but its `+` lines carry the patch's
indentation; written as they are, they change the document's structure where indentation is meaning (YAML,
Python). So the matched context lines say how the patch's indentation maps to the file's: one consistent prefix
(`sandbox.patch.hunks._indent_shift`), tabs for N spaces, or, here, a mapping of indent widths (2 -> 4, 4 -> 8,
a YAML list item's `- ` offset kept as it is). An added line's width the context does not show is mapped by the
one consistent rule the context shows (a shift or a ratio); where neither holds the hunk is refused
(`IndentMismatch`), as `git apply` refuses it, rather than written with indentation that means something else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise

from sandbox.patch.continuation import continued, scan_start
from sandbox.patch.ops import HunkLine

_NEARBY = 100
"""Lines either side of the match whose indent widths count as the file's own (to choose shift or ratio)."""


@dataclass
class IndentMismatch:
    """The hunk matched only ignoring indentation, and its added lines' indentation maps to no width of the file."""

    position: int
    """0-based index of the match."""
    reason: str


Remap = Callable[[str], str]


def _width(text: str) -> int | None:
    """The number of leading spaces, or None when the indentation holds a tab."""
    stripped = text.lstrip(" \t")
    lead = text[: len(text) - len(stripped)]
    return None if "\t" in lead else len(lead)


def context_pairs(
    hunk_lines: list[HunkLine], front: int, back: int, file_lines: list[str], start: int
) -> list[tuple[HunkLine, str]]:
    """The hunk's context and removed lines (less the `front` and `back` ones fuzz left out) beside the file's lines
    they matched at `start`: the evidence of how the patch's indentation relates to the file's. Blank lines are left
    out, and so are lines that continue a statement on either side (`sandbox.patch.continuation`): their
    indentation is alignment (under a bracket, after a `\\`, inside a string), and one of them aligned otherwise
    must not move the statements the hunk adds."""
    old = [line for line in hunk_lines if line.op != "+"]
    body = old[front : len(old) - back]  # fuzz leaves out context lines only: old lines at both ends
    ours = continued([line.text for line in old])[front:]
    first = max(start - front, 0)
    begin = scan_start(file_lines, first)
    theirs = continued(file_lines[begin : start + len(body)])[start - begin :]
    pairs: list[tuple[HunkLine, str]] = []
    for index, line in enumerate(body):
        actual = file_lines[start + index]
        if line.text.strip() and actual.strip() and not ours[index] and not theirs[index]:
            pairs.append((line, actual))
    return pairs


def level_map(
    matched: list[tuple[HunkLine, str]], body: list[HunkLine], file_lines: list[str], start: int
) -> Remap | IndentMismatch | None:
    """How to re-indent the `+` lines when no single prefix turns the patch's indentation into the file's;
    `matched` is the evidence (`context_pairs`).

    None: leave them as written (tabs involved, no context, or the context does not tell a mapping).
    """
    pairs: dict[int, int] = {}
    removed = any(line.op == "-" for line, _ in matched)
    for line, actual in matched:
        want, have = _width(line.text), _width(actual)
        if want is None or have is None or pairs.setdefault(want, have) != have:
            return None
    ordered = sorted(pairs.items())
    if not ordered or all(w == h for w, h in ordered) or (not removed and all(h == w + 1 for w, h in ordered)):
        return None  # the same widths, or only the context's ` ` prefix lost (see `hunks._indent_shift`)
    if any(b[1] <= a[1] for a, b in pairwise(ordered)):
        return None  # not a mapping of levels: some lines' whitespace drifted on its own
    added = {w for line in body if line.op == "+" and line.text.strip() for w in [_width(line.text)]}
    if None in added:
        return None
    widths = {w for w in added if w is not None}
    table = dict(pairs)
    missing = sorted(widths - table.keys())
    if missing:
        rule = _rule(ordered, missing, file_lines, start)
        if rule is None:
            return IndentMismatch(
                start,
                f"its lines match only with their indentation ignored, and its added lines are indented "
                f"{', '.join(map(str, missing))} space(s), a width its context lines do not map to the file's "
                f"indentation (the context maps {_shown(ordered)})",
            )
        table.update({w: rule(w) for w in missing})
    return lambda text: text if not text.strip() else " " * table[_width(text) or 0] + text.lstrip(" ")


def _shown(ordered: list[tuple[int, int]]) -> str:
    return ", ".join(f"{w} -> {h}" for w, h in ordered)


def _rule(
    ordered: list[tuple[int, int]], missing: list[int], file_lines: list[str], start: int
) -> Callable[[int], int] | None:
    """The one rule the context shows (a shift, else a ratio) that maps every missing width to a width >= 0;
    when both hold, the one whose widths the file already has near the match (a shift first)."""
    candidates: list[Callable[[int], int]] = []
    shifts = {h - w for w, h in ordered}
    if len(shifts) == 1:
        shift = shifts.pop()
        if all(w + shift >= 0 for w in missing):
            candidates.append(lambda w: w + shift)
    ratios = {Fraction(h, w) for w, h in ordered if w}
    if len(ratios) == 1 and all(h == 0 for w, h in ordered if not w):
        ratio = ratios.pop()
        if all((w * ratio).denominator == 1 for w in missing):
            candidates.append(lambda w: int(w * ratio))
    if len(candidates) < 2:
        return candidates[0] if candidates else None
    near = {0, *(h for _, h in ordered)}
    for text in file_lines[max(start - _NEARBY, 0) : start + _NEARBY]:
        width = _width(text)
        if text.strip() and width is not None:
            near.add(width)
    return next((rule for rule in candidates if all(rule(w) in near for w in missing)), candidates[0])
