"""Checking that Python source compiles, without running it (shared by apply_patch and the run_tests reward).

Compiling is the expensive part of `apply_patch` (more than parsing, matching and writing together), and a patch
usually changes a few functions of a long file. `changed_syntax_error` therefore compiles only the blocks that
hold changed lines (top-level `def`s and `class`es, and the members of long classes, each inside `if 1:`); when one
of them does not compile, the whole file is compiled and its first error is reported, so a reported error is
always the one a full compile gives.
What it does not report is an error in a block the patch did not touch (the run_tests reward compiles whole files).
"""

from __future__ import annotations
import __future__

import re
import warnings
from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate

#: Files shorter than this are compiled whole: splitting them saves too little (measured on the bench diffs: 100
#: compiles 5% fewer lines than 200, and splitting a 100-line file costs less than compiling it).
MIN_SPLIT_LINES = 100
#: Top-level classes longer than this are checked member by member.
SPLIT_CLASS_LINES = 100
_BLOCK_START = re.compile(r"([ \t]*)(?:(?:async[ \t]+)?def[ \t]|class[ \t]|@)")
#: The newline before a top-level `def`, `class` or decorator line: what `split_blocks` looks for first (a lookahead
#: after a literal newline is what the regex engine scans fastest; the one-character class first turns most lines
#: away in one test: 3.3 -> 1.9 ms over the 79 files of the release diffs).
_TOP_BLOCK_LINE = re.compile(r"\n(?=[acd@])(?=def[ \t]|class[ \t]|@|async[ \t]+def[ \t])")
#: The newline before a line of top-level code or a line that may start a block: looked for only inside the long
#: classes that the patch changed. The indentation is taken possessively (`++`): an indented line that goes on with
#: anything else is given up at once, not retried one space shorter at a time (the long classes of the release
#: diffs: 3.0 -> 1.6 ms; the lines found are the plain pattern's, as its test checks).
_LINE_OF_INTEREST = re.compile(r"\n(?=[^\s#)]|[ \t]++(?:def|class|@|async[ \t]+def))")
#: A line starting with a `__future__` import, after its newline.
_FUTURE_LINE = re.compile(r"\n(from __future__[^\n]*)")


def syntax_error(source: bytes | str, filename: str, flags: int = 0) -> tuple[int | None, str] | None:
    """(line, message) of the first error that compiling `source` finds; None when it compiles.

    Bytes, so a coding declaration or a BOM is honoured. The compiler only: nothing is executed. Pathological
    input that exhausts the compiler (deep nesting, huge expressions) is reported, never raised.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _compile_error(source, filename, flags)


def _compile_error(source: bytes | str, filename: str, flags: int) -> tuple[int | None, str] | None:
    """`syntax_error` without its warnings filter, for callers that set one around many compiles."""
    try:
        compile(source, filename, "exec", flags=flags, dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno, exc.msg
    except (ValueError, UnicodeError, RecursionError, MemoryError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return None


def file_syntax_error(
    source: bytes, lines: Sequence[str], changed: Sequence[tuple[int, int]] | None, filename: str
) -> tuple[int | None, str] | None:
    """A patched file's first syntax error: the whole file when `changed` is None (a new or reworked file), else
    the blocks holding its changed lines (`changed_syntax_error`). The one check both apply_patch and its
    worker process run, so they report the same errors."""
    if changed is None:
        return syntax_error(source, filename)
    return changed_syntax_error(source, lines, changed, filename)


def changed_syntax_error(
    source: bytes, lines: Sequence[str], changed: Sequence[tuple[int, int]], filename: str
) -> tuple[int | None, str] | None:
    """The file's first syntax error when a block holding a changed line does not compile, else None.

    `source` is the file's bytes, `lines` its lines (without endings), `changed` the `[start, end)` line ranges
    (0-based) that the patch wrote; an empty range marks lines removed at that point.
    """
    if not changed:
        return None
    if len(lines) < MIN_SPLIT_LINES:
        return syntax_error(source, filename)
    return text_syntax_error(source, "\n" + "\n".join(lines), changed, filename)


def text_syntax_error(
    source: bytes, text: str, changed: Sequence[tuple[int, int]], filename: str
) -> tuple[int | None, str] | None:
    """`changed_syntax_error` with the file's lines given as `text`: each line after a newline, the first one
    too (`"\\n" + "\\n".join(lines)`). The syntax worker builds that from the bytes it gets, never splitting them
    into lines: the blocks are found, cut and compiled by their offsets in `text`."""
    if not changed:
        return None
    found, offsets, count = _lines_outside_strings(text, _TOP_BLOCK_LINE, 0, len(text), 0)
    if count < MIN_SPLIT_LINES:
        return syntax_error(source, filename)
    flags = _future_flags(text) if b"__future__" in source else 0
    if flags is None:
        return syntax_error(source, filename)
    blocks = _blocks(text, count, found, offsets, changed)
    with warnings.catch_warnings():  # one filter for the file: setting it up costs more than compiling a small chunk
        warnings.simplefilter("ignore")
        for first, last, nested, start, end in _chunks_to_check(blocks, changed):
            body = text[start + 1 : end]
            # A member is compiled inside `if 1:`; a class head without its members gets a `pass` to stay valid.
            chunk = (
                f"if 1:\n{body}\n" if nested else f"{body}\n{_body_indent(text, count, first, last, start, end)}pass\n"
            )
            if _compile_error(chunk, filename, flags) is not None:
                return _compile_error(source, filename, 0)
    return None


def _future_flags(text: str) -> int | None:
    """The compiler flags of the file's one-line `from __future__ import ...` lines (`text`: its lines, each after a
    newline), which every block must be compiled with; None (compile the file whole) for anything unusual: a
    parenthesised or unknown feature, or `barry_as_FLUFL`, which changes what parses."""
    flags = 0
    for found in _FUTURE_LINE.finditer(text):  # the lines that start with it, found in C, not looked at one by one
        line = found.group(1)
        head, _, names = line.partition(" import ")
        if head.split() != ["from", "__future__"] or not names or "(" in names or "\\" in names:
            return None
        for name in names.split("#", 1)[0].split(","):
            feature = getattr(__future__, name.strip(), None)
            if not isinstance(feature, __future__._Feature) or name.strip() == "barry_as_FLUFL":
                return None
            flags |= feature.compiler_flag
    return flags


def _body_indent(text: str, count: int, first: int, last: int, start: int, end: int) -> str:
    """A `pass` line's indentation after a chunk (`[first, last)`, from the newlines at `start` and `end` of
    `text`): the next member's, for a class head; none otherwise."""
    if last < count and text.startswith(("class", "@"), start + 1):
        stop = text.find("\n", end + 1)
        following = text[end + 1 : stop if stop >= 0 else len(text)]
        return following[: len(following) - len(following.lstrip())]
    return ""


Chunk = tuple[int, int, bool]
"""`[first, last)` lines, and whether they are a class's member (compiled inside `if 1:`)."""
Block = tuple[int, int, bool, int, int]
"""A `Chunk`, with the offsets in the text of the newlines before its first line and after its last one (the text's
length when it ends the file)."""


def split_blocks(lines: Sequence[str], changed: Sequence[tuple[int, int]] | None = None) -> list[Chunk]:
    """The file cut at its top-level `def`, `class` and decorator lines, and long classes at their members.

    With `changed`, only the long classes that hold a changed line are cut into members (the others are not
    checked at all). A line inside a triple-quoted string (an odd number of `\"\"\"` or `'''` above it) never starts
    a chunk; the count is a heuristic (quotes in comments fool it), which costs only a bigger chunk or a full
    compile, never a wrong one. The lines that matter are found by regular expressions over the text, not line by
    line: the top-level block lines first, the other lines of a class only when it is cut.
    """
    text = "\n" + "\n".join(lines)
    found, offsets, _ = _lines_outside_strings(text, _TOP_BLOCK_LINE, 0, len(text), 0)
    return [block[:3] for block in _blocks(text, len(lines), found, offsets, changed)]


def _blocks(
    text: str, count: int, found: list[int], offsets: list[int], changed: Sequence[tuple[int, int]] | None
) -> list[Block]:
    """`split_blocks` over `text` (`count` lines, each after a newline), given the top-level block lines that
    `_TOP_BLOCK_LINE` found outside strings and the offsets of their newlines."""
    where = dict(zip(found, offsets, strict=True))
    where[0] = 0
    where[count] = len(text)
    tops = [0, *_block_starts(text, found, offsets)]
    touched = _Touched(changed) if changed is not None else None
    blocks: list[Block] = []
    for first, last in zip(tops, [*tops[1:], count], strict=True):
        start, end = where[first], where[last]
        if last - first >= SPLIT_CLASS_LINES and (touched is None or touched(first, last)):
            blocks += _split_class(text, first, last, start, end)
        else:
            blocks.append((first, last, False, start, end))
    return blocks


def _lines_outside_strings(
    text: str, pattern: re.Pattern[str], pos: int, end: int, index: int
) -> tuple[list[int], list[int], int]:
    """The lines whose preceding newline `pattern` finds in `text[pos:end]`, less those inside a triple-quoted
    string, with the offsets of those newlines; `pos` is the newline before line `index`, outside any string. The
    third value is `index` plus the newlines in `text[pos:end]`: for the whole text, how many lines it holds.

    Quotes are counted between consecutive matches, never collected: a file has more of them than lines found."""
    found: list[int] = []
    offsets: list[int] = []
    doubles = singles = 0
    count = text.count
    for match in pattern.finditer(text, pos, end):
        start = match.start()
        doubles += count('"""', pos, start)
        singles += count("'''", pos, start)
        index += count("\n", pos, start)
        pos = start
        if not (doubles % 2 or singles % 2):
            found.append(index)
            offsets.append(start)
    return found, offsets, index + count("\n", pos, end)


def _block_starts(text: str, indices: Sequence[int], offsets: Sequence[int]) -> dict[int, int]:
    """Those of the lines (in order, each after the newline at its offset in `text`) that start a block, with their
    indentation: a `def`, `class` or the first of its decorators, not the continuation of a line ending in a
    backslash."""
    starts: dict[int, int] = {}
    decorated: set[int] = set()  # indentations where decorators wait for their def or class
    match = _BLOCK_START.match
    for index, offset in zip(indices, offsets, strict=True):
        block = match(text, offset + 1)
        if block is None:
            continue
        indent = block.end(1) - offset - 1
        waiting = indent in decorated
        (decorated.add if text[offset + 1 + indent] == "@" else decorated.discard)(indent)
        if index and not waiting and text[offset - 1] != "\\":
            starts[index] = indent
    return starts


class _Touched:
    """Whether `[first, last)` holds a changed line (or touches lines removed at its edge), for many blocks of
    one file: a bisection over the changed spans, not a scan of them per block."""

    def __init__(self, changed: Sequence[tuple[int, int]]) -> None:
        spans = sorted((max(start - 1, 0), start + 1) if end <= start else (start, end) for start, end in changed)
        self.starts = [lo for lo, _ in spans]
        self.reach = list(accumulate((hi for _, hi in spans), max))
        """The furthest end of the spans up to each one."""

    def __call__(self, first: int, last: int) -> bool:
        before = bisect_left(self.starts, last)  # the spans that start before `last`
        return before > 0 and self.reach[before - 1] > first


def _split_class(text: str, first: int, last: int, start: int, end: int) -> list[Block]:
    """A long top-level block (lines `[first, last)`, from the newline at `start` to the one at `end`): a class
    as its head, its members and what follows it at top level; any other block whole."""
    whole: list[Block] = [(first, last, False, start, end)]
    head, at = first, start  # the first line that is not a decorator, and the newline before it
    while head < last - 1 and text.startswith("@", at + 1):
        head, at = head + 1, text.index("\n", at + 1)
    if not text.startswith("class", at + 1):
        return whole
    body = None
    for index in range(head, min(head + 20, last)):
        stop = text.find("\n", at + 1)
        stop = end if stop < 0 or stop > end else stop
        if text[at + 1 : stop].rstrip().endswith(":"):
            body = index + 1
            break
        at = stop
    if body is None:
        return whole
    found, offsets, _ = _lines_outside_strings(text, _LINE_OF_INTEREST, start, end, first)
    where = dict(zip(found, offsets, strict=True))
    where[last] = end
    top_level = (i for i, offset in zip(found, offsets, strict=True) if i >= body and text[offset + 1] not in " \t")
    stop_line = next(top_level, last)  # the class ends where top-level code resumes
    candidates = _block_starts(text, found, offsets)
    inner = [i for i in candidates if body <= i < stop_line]
    if not inner:
        return whole
    indent = min(candidates[i] for i in inner)
    members = [i for i in inner if candidates[i] == indent]
    blocks: list[Block] = [(first, members[0], False, start, where[members[0]])]
    bounds = [*members[1:], stop_line]
    blocks += [(a, b, True, where[a], where[b]) for a, b in zip(members, bounds, strict=True)]
    if stop_line < last:
        blocks.append((stop_line, last, False, where[stop_line], end))
    return blocks


def _chunks_to_check(chunks: list[Block], changed: Sequence[tuple[int, int]]) -> list[Block]:
    """The chunks that hold a changed line (or both sides of removed lines), adjacent top-level ones merged."""
    touched = _Touched(changed)
    wanted = [chunk for chunk in chunks if touched(chunk[0], chunk[1])]
    merged: list[Block] = []
    for chunk in wanted:
        if merged and merged[-1][1] == chunk[0] and merged[-1][2] == chunk[2]:
            merged[-1] = (merged[-1][0], chunk[1], chunk[2], merged[-1][3], chunk[4])
        else:
            merged.append(chunk)
    return merged
