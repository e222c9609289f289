"""Apply the hunks of one file section to a file's text, in memory.

Every hunk is located in the original text (hunks in order, never overlapping), then the replacements are spliced
in. Context lines keep the file's own text and line endings; added lines take the file's line ending, or the
patch's own when the patch mixes LF and CR LF on purpose.

Two things a line ending or a file's start hide are read as `git apply` reads them, bytes as they are:
- a hunk whose first old or new line starts with a UTF-8 BOM (`git diff` of a BOM file shows it there) is matched
  against the file with its BOM, and the new text has the BOM the hunk's new side has;
- in a patch that means its CR LF endings, a line marked `\\ No newline at end of file` that ends in CR is a last
  line ending in a bare CR.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial

from sandbox.patch.anchors import AnchorMissing
from sandbox.patch.haystack import Haystack
from sandbox.patch.indent import IndentMismatch, Remap, context_pairs, level_map
from sandbox.patch.match import Ambiguity, EdgeMismatch, Match, ScopeMismatch, locate
from sandbox.patch.ops import Hunk, HunkLine
from sandbox.patch.textfile import BOM, CRLF, LF, TextFile

_REINDENT_COMPARATORS = frozenset({"surrounding_ws", "unicode"})


@dataclass
class HunkResult:
    hunk: Hunk
    match: Match | None = None
    problem: Ambiguity | AnchorMissing | ScopeMismatch | EdgeMismatch | IndentMismatch | None = None
    """Why the hunk was not placed; both None means its lines were not found."""
    reindent: Remap | None = None
    """How its added lines are re-indented to the file's indentation (a whitespace-tolerant match)."""


@dataclass
class FileOutcome:
    original: TextFile
    results: list[HunkResult] = field(default_factory=list)
    text: TextFile | None = None
    """The new text; None when some hunk failed."""
    changed: list[tuple[int, int]] = field(default_factory=list)
    """`[start, end)` line ranges of the new text that the hunks added; an empty range where they only removed
    lines. Context lines are not in them: they are the file's own, and the syntax check need not look at the
    blocks that only hold some."""

    @property
    def failed(self) -> list[HunkResult]:
        return [r for r in self.results if r.match is None]


def apply_hunks(original: TextFile, hunks: list[Hunk], *, informative: bool) -> FileOutcome:
    """Place every hunk and, when all of them were placed, build the new text."""
    outcome = FileOutcome(original)
    numbered = all(h.old_start is not None for h in hunks)
    ordered = sorted(hunks, key=lambda h: h.old_start or 0) if numbered else list(hunks)
    if informative:
        ordered = [_bare_cr(h) if h.old_eof_newline is False or h.new_eof_newline is False else h for h in ordered]
    text = original
    bom = any(_bom_line(h) for h in ordered if not h.old_start)  # only a hunk at the top can hold the BOM
    if bom and original.bom and original.lines:  # the file as git sees it: the BOM begins its first line
        text = TextFile([BOM + original.lines[0], *original.lines[1:]], original.eols, bom=False)
    hay = Haystack(text.lines)
    lo, drift = 0, 0
    budget = [max(LOOKAHEAD_SEARCHES, LOOKAHEAD_LINES // max(len(text.lines), 1))]
    for index, hunk in enumerate(ordered):
        origin = None if hunk.old_start is None else max(hunk.old_start + drift, 0)
        located = locate(hay, hunk, origin, lo)
        if isinstance(located, Ambiguity) and not numbered:
            located = _only_room(hay, located, ordered[index + 1 :], budget) or located
        remap = _remap(hunk, located, text.lines) if isinstance(located, Match) else None
        if isinstance(remap, IndentMismatch):
            outcome.results.append(HunkResult(hunk, None, remap))
        elif isinstance(located, Match):
            outcome.results.append(HunkResult(hunk, located, reindent=remap))
            lo = located.start + located.length
            drift = located.offset if hunk.old_start is not None else drift
        else:
            outcome.results.append(HunkResult(hunk, None, located))
    outcome.results.sort(key=lambda r: r.hunk.number)
    if not outcome.failed:
        outcome.text, outcome.changed = _splice(text, [r for r in outcome.results if r.match], informative)
        if bom:
            _take_bom(outcome.text)
    return outcome


#: The hunks of a file are placed in order, so one that matches at several places but leaves room for the hunks
#: after it at only one of them is placed there. How far that look-ahead goes: the hunks after the ambiguous one that
#: are looked at (a place is not ruled out by hunks further on), and the searches it may make for one file in all:
#: 256, or more in a short file, as many as search 2 million of its lines (a search's cost follows the file's
#: length). When they run out, an ambiguous hunk stays ambiguous: a patch of many chunks, each matching many twins in
#: a long file, costs at most that many searches.
LOOKAHEAD_HUNKS = 64
LOOKAHEAD_SEARCHES = 256
LOOKAHEAD_LINES = 2_000_000


def _only_room(hay: Haystack, ambiguity: Ambiguity, later: list[Hunk], budget: list[int]) -> Match | None:
    """The one place of an ambiguous hunk (without line numbers, a Codex chunk's) after which the hunks that follow
    it can still be placed, in order (`x`, `y`, `x` and the chunks `-x` then `-x`: the first `x` is the first
    chunk's); None when several places or none leave room, or the look-ahead's searches run out first.

    The later hunks are placed as early as they can be, which leaves the most room for the ones after them, so a
    place that leaves room makes every earlier place leave room too: only the first two places need a look."""
    if not later or ambiguity.placed is None:
        return None
    starts = sorted(set(ambiguity.starts))
    if len(starts) < 2:
        return None
    length = ambiguity.placed.length
    if _room_after(hay, later, starts[1] + length, budget) is not False:
        return None
    return ambiguity.match_at(starts[0]) if _room_after(hay, later, starts[0] + length, budget) else None


def _room_after(hay: Haystack, hunks: list[Hunk], lo: int, budget: list[int]) -> bool | None:
    """Whether the hunks can be placed in order from index `lo` on, each as early as it can be; None when the
    budget of searches runs out before that is known."""
    for hunk in hunks[:LOOKAHEAD_HUNKS]:
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        located = locate(hay, hunk, None, lo, first=True)
        if isinstance(located, Match):
            lo = located.start + located.length
        elif isinstance(located, Ambiguity) and located.placed is not None:
            lo = min(located.starts) + located.placed.length
        else:
            return False
    return True


def _bom_line(hunk: Hunk) -> bool:
    """Whether the hunk's first old line or first new line starts with a BOM."""
    old = new = False
    for line in hunk.lines:
        if (line.op != "+" and not old) or (line.op != "-" and not new):
            if line.text[:1] == BOM:
                return True
            old, new = old or line.op != "+", new or line.op != "-"
            if old and new:
                return False
    return False


def _take_bom(text: TextFile) -> None:
    """A BOM at the start of the new first line is the file's BOM; none there, the file has none."""
    text.bom = bool(text.lines) and text.lines[0][:1] == BOM
    if text.bom:
        text.lines[0] = text.lines[0][1:]


def _bare_cr(hunk: Hunk) -> Hunk:
    """The hunk with the CR of a line marked `\\ No newline at end of file` moved into the line's text: in a patch
    whose CR LF endings are meant (`informative`), such a line ends in a bare CR, as the file's last line does."""
    lines = list(hunk.lines)
    for side, flag in (("+", hunk.old_eof_newline), ("-", hunk.new_eof_newline)):
        if flag is False:
            last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].op != side), None)
            if last is not None and lines[last].cr:
                lines[last] = HunkLine(lines[last].op, lines[last].text + "\r", False)
    return replace(hunk, lines=lines) if lines != hunk.lines else hunk


def _splice(original: TextFile, placed: list[HunkResult], informative: bool) -> tuple[TextFile, list[tuple[int, int]]]:
    dominant = original.dominant_eol() if original.lines else None
    lines: list[str] = []
    eols: list[str] = []
    changed: list[tuple[int, int]] = []
    pos = 0
    final_newline = original.ends_with_newline
    for result in sorted(placed, key=lambda r: (r.match.start if r.match else 0, r.hunk.number)):
        match = result.match
        assert match is not None
        lines += original.lines[pos : match.start]
        eols += original.eols[pos : match.start]
        new_lines, new_eols, written = _replacement(original, result, match, informative, dominant)
        changed += [(len(lines) + start, len(lines) + end) for start, end in written]
        lines += new_lines
        eols += new_eols
        pos = match.start + match.length
        # a hunk marked `\\ No newline at end of file` ends the file (`match.pins_of`); when it does not end here,
        # fuzz left out its last lines, context lines that keep the file's own ending
        if pos == len(original.lines) and result.hunk.new_eof_newline is not None:
            final_newline = result.hunk.new_eof_newline
    lines += original.lines[pos:]
    eols += original.eols[pos:]
    fallback = dominant or next((e for e in eols if e), LF)
    # a line without an ending inside the file (a hunk added lines after the old last one) gets one; the usual
    # file has every ending but the last LF, which counting by identity tells faster than a search for ""
    if eols and eols.count(LF) - (eols[-1] == LF) < len(eols) - 1:
        try:
            inside = eols.index("", 0, len(eols) - 1)
        except ValueError:
            inside = len(eols)
        for i in range(inside, len(eols) - 1):
            if not eols[i]:
                eols[i] = fallback
    if eols:
        eols[-1] = (eols[-1] or fallback) if final_newline else ""
    return TextFile(lines, eols, original.bom), changed


def _remap(hunk: Hunk, match: Match, lines: list[str]) -> Remap | IndentMismatch | None:
    """How a whitespace-tolerant match re-indents the hunk's added lines: the file's tabs for the patch's spaces,
    one consistent prefix, or level by level (`sandbox.patch.indent`); an `IndentMismatch` when no mapping holds."""
    if match.comparator not in _REINDENT_COMPARATORS:
        return None
    body = hunk.lines[match.trim_front : len(hunk.lines) - match.trim_back]
    matched = context_pairs(hunk.lines, match.trim_front, match.trim_back, lines, match.start)
    shift = _indent_shift(matched)
    if shift is not None and shift[0] and shift[1]:  # tabs for spaces
        return partial(_reindent, shift=shift)
    if shift is None:
        width = _spaces_per_tab(matched)
        if width is not None:  # spaces for the patch's tabs
            return partial(_expand_tabs, spaces=" " * width)
    levels = level_map(matched, body, lines, match.start)
    if levels is not None:
        return levels
    return None if shift is None else partial(_reindent, shift=shift)


def _spaces_per_tab(matched: list[tuple[HunkLine, str]]) -> int | None:
    """How many spaces one leading tab of the patch stands for, when the patch indents with tabs a file indented
    with spaces and every context line that starts a statement shows the same number (lines at the left margin
    aside); None otherwise, also when a context line matched with a tab on both sides (an odd line, not the
    block's indentation)."""
    widths: set[int] = set()
    for line, actual in matched:
        want, have = _leading(line.text), _leading(actual)
        if not want and not have:
            continue
        if not want or want.strip("\t") or not have or have.strip(" ") or len(have) % len(want):
            return None
        widths.add(len(have) // len(want))
    return widths.pop() if len(widths) == 1 else None


def _expand_tabs(text: str, spaces: str) -> str:
    """`text` with each of its leading tabs written as `spaces` (what follows them, alignment included, kept)."""
    tabs = len(text) - len(text.lstrip("\t"))
    return spaces * tabs + text[tabs:] if tabs and text.strip() else text


def _replacement(
    original: TextFile, result: HunkResult, match: Match, informative: bool, dominant: str | None
) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    """The hunk's new lines and their endings, and the ranges of them it added (empty where it only removed):
    one range per run of changed lines, context lines ending it."""
    hunk, remap = result.hunk, result.reindent
    body = hunk.lines[match.trim_front : len(hunk.lines) - match.trim_back]
    lines: list[str] = []
    eols: list[str] = []
    written: list[tuple[int, int]] = []
    ptr = match.start
    run = -1  # where the run of changed lines being read began in `lines`; -1 between runs
    eol = None if informative or dominant is None else dominant  # else each added line's own ending
    old_lines, old_eols, add_line, add_eol = original.lines, original.eols, lines.append, eols.append
    for line in body:
        op = line[0]
        if op == " ":  # a context line keeps the file's own text and ending
            if run >= 0:
                written.append((run, len(lines)))
                run = -1
            add_line(old_lines[ptr])
            add_eol(old_eols[ptr])
            ptr += 1
            continue
        if run < 0:
            run = len(lines)
        if op == "-":
            ptr += 1
        else:
            add_line(line[1] if remap is None else remap(line[1]))
            add_eol(eol or (CRLF if line[2] else LF))
    if run >= 0:
        written.append((run, len(lines)))
    return lines, eols, written


def _leading(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t"))]


def _indent_shift(matched: list[tuple[HunkLine, str]]) -> tuple[str, str] | None:
    """(prefix to remove, prefix to add) that turns the patch's indentation into the file's, if the context lines
    that start statements (`matched`, from `context_pairs`) show a consistent one.

    Not when the only evidence is context lines one space short of the file: that is the context's ` ` prefix lost
    (a model writes `    x` for ` ` + `    x`) while its `+` lines kept theirs, which must then stay as written.
    A file indented with tabs that the patch indents with a consistent number of spaces per tab (a Makefile's
    recipe, Go) gets `("\t", spaces)`: the added lines' leading spaces become tabs, unless a context line indented
    with spaces matched the file's line indented just so (a tab-indented comment among space-indented code is one odd
    line, not the block's indentation: the context disagrees, and the added lines stay as written)."""
    shifts: set[tuple[str, str]] = set()
    tab_widths: set[int] = set()
    spaced = False  # a context line indented with spaces matched a line indented with the same spaces
    removed = any(line.op == "-" for line, _ in matched)
    for line, actual in matched:
        want, have = _leading(line.text), _leading(actual)
        spaced = spaced or (want == have and " " in want)
        if have.endswith(want):
            shifts.add(("", have[: len(have) - len(want)]))
        elif want.endswith(have):
            shifts.add((want[: len(want) - len(have)], ""))
        elif have.strip("\t") == "" and want.strip(" ") == "" and len(want) % len(have) == 0:
            tab_widths.add(len(want) // len(have))  # the file indents with tabs, the patch with spaces
        else:
            return None
    if tab_widths:
        if len(tab_widths) != 1 or shifts - {("", "")} or spaced:
            return None
        return ("\t", " " * tab_widths.pop())  # both sides set: each run of that many leading spaces becomes a tab
    if len(shifts) != 1:
        return None
    shift = shifts.pop()
    if shift == ("", "") or (shift == ("", " ") and not removed):
        return None
    return shift


def _reindent(text: str, shift: tuple[str, str] | None) -> str:
    if shift is None or not text.strip():
        return text
    remove, add = shift
    if remove and add:  # ("\t", N spaces): the patch's spaces in the file's tabs
        spaces = len(text) - len(text.lstrip(" "))
        return "\t" * (spaces // len(add)) + " " * (spaces % len(add)) + text[spaces:]
    if remove:
        return text[len(remove) :] if text.startswith(remove) else text
    return add + text
