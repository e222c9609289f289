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
#: classes that the patch changed.
#: A line starting with a `__future__` import, after its newline.
_FUTURE_LINE = re.compile(r"\n(from __future__[^\n]*)")
_LINE_OF_INTEREST = re.compile(r"\n(?=[^\s#)]|[ \t]+(?:def|class|@|async[ \t]+def))")


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
    text = "\n" + "\n".join(lines)  # every line follows a newline, the first one too
    flags = _future_flags(text) if b"__future__" in source else 0
    if flags is None:
        return syntax_error(source, filename)
    with warnings.catch_warnings():  # one filter for the file: setting it up costs more than compiling a small chunk
        warnings.simplefilter("ignore")
        for first, last, nested in _chunks_to_check(_split_blocks(lines, text, changed), changed):
            body = "\n".join(lines[first:last])
            # A member is compiled inside `if 1:`; a class head without its members gets a `pass` to stay valid.
            text = f"if 1:\n{body}\n" if nested else f"{body}\n{_body_indent(lines, first, last)}pass\n"
            if _compile_error(text, filename, flags) is not None:
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


def _body_indent(lines: Sequence[str], first: int, last: int) -> str:
    """A `pass` line's indentation after a chunk: the next member's, for a class head; none otherwise."""
    if last < len(lines) and lines[first].startswith(("class", "@")):
        following = lines[last]
        return following[: len(following) - len(following.lstrip())]
    return ""


Chunk = tuple[int, int, bool]
"""`[first, last)` lines, and whether they are a class's member (compiled inside `if 1:`)."""


def split_blocks(lines: Sequence[str], changed: Sequence[tuple[int, int]] | None = None) -> list[Chunk]:
    """The file cut at its top-level `def`, `class` and decorator lines, and long classes at their members.

    With `changed`, only the long classes that hold a changed line are cut into members (the others are not
    checked at all). A line inside a triple-quoted string (an odd number of `\"\"\"` or `'''` above it) never starts
    a chunk; the count is a heuristic (quotes in comments fool it), which costs only a bigger chunk or a full
    compile, never a wrong one. The lines that matter are found by regular expressions over the text, not line by
    line: the top-level block lines first, the other lines of a class only when it is cut.
    """
    return _split_blocks(lines, "\n" + "\n".join(lines), changed)


def _split_blocks(lines: Sequence[str], text: str, changed: Sequence[tuple[int, int]] | None = None) -> list[Chunk]:
    """`split_blocks`, with the lines already joined in `text`, each after a newline (the first one too)."""
    found, offsets = _lines_outside_strings(text, _TOP_BLOCK_LINE, 0, len(text), 0)
    starts = _block_starts(lines, found)
    tops = [0, *starts]
    where = dict(zip(found, offsets, strict=True))
    touched = _Touched(changed) if changed is not None else None
    chunks: list[Chunk] = []
    for first, last in zip(tops, [*tops[1:], len(lines)], strict=True):
        if last - first >= SPLIT_CLASS_LINES and (touched is None or touched(first, last)):
            end = where[last] if last < len(lines) else len(text)
            chunks += _split_class(lines, text, first, last, (where.get(first, 0), end))
        else:
            chunks.append((first, last, False))
    return chunks


def _lines_outside_strings(
    text: str, pattern: re.Pattern[str], pos: int, end: int, index: int
) -> tuple[list[int], list[int]]:
    """The lines whose preceding newline `pattern` finds in `text[pos:end]`, less those inside a triple-quoted
    string, with the offsets of those newlines; `pos` is the newline before line `index`, outside any string.

    Quotes are counted between consecutive matches, never collected: a file has more of them than lines found."""
    found: list[int] = []
    offsets: list[int] = []
    doubles = singles = 0
    for match in pattern.finditer(text, pos, end):
        start = match.start()
        doubles += text.count('"""', pos, start)
        singles += text.count("'''", pos, start)
        index += text.count("\n", pos, start)
        pos = start
        if not (doubles % 2 or singles % 2):
            found.append(index)
            offsets.append(start)
    return found, offsets


def _block_starts(lines: Sequence[str], indices: Sequence[int]) -> dict[int, int]:
    """Those of the lines (in order) that start a block, with their indentation: a `def`, `class` or the first
    of its decorators, not the continuation of a line ending in a backslash."""
    starts: dict[int, int] = {}
    decorated: set[int] = set()  # indentations where decorators wait for their def or class
    for index in indices:
        line = lines[index]
        block = _BLOCK_START.match(line)
        if block is None:
            continue
        indent = len(block.group(1))
        waiting = indent in decorated
        (decorated.add if line[indent] == "@" else decorated.discard)(indent)
        if index and not waiting and not lines[index - 1].endswith("\\"):
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


def _split_class(lines: Sequence[str], text: str, first: int, last: int, span: tuple[int, int]) -> list[Chunk]:
    """A long top-level class as its head, its members and what follows it at top level; else the block whole.

    `span` is where the block lies in `text` (from the newline before its first line)."""
    whole: list[Chunk] = [(first, last, False)]
    head = next((i for i in range(first, last) if not lines[i].startswith("@")), first)
    if not lines[head].startswith("class"):
        return whole
    body = next((i + 1 for i in range(head, min(head + 20, last)) if lines[i].rstrip().endswith(":")), None)
    if body is None:
        return whole
    found, _ = _lines_outside_strings(text, _LINE_OF_INTEREST, span[0], span[1], first)
    end = next((i for i in found if i >= body and lines[i][:1] not in (" ", "\t")), last)  # top-level code
    candidates = _block_starts(lines, found)
    inner = [i for i in candidates if body <= i < end]
    if not inner:
        return whole
    indent = min(candidates[i] for i in inner)
    members = [i for i in inner if candidates[i] == indent]
    chunks: list[Chunk] = [(first, members[0], False)]
    chunks += [(a, b, True) for a, b in zip(members, [*members[1:], end], strict=True)]
    if end < last:
        chunks.append((end, last, False))
    return chunks


def _chunks_to_check(chunks: list[Chunk], changed: Sequence[tuple[int, int]]) -> list[Chunk]:
    """The chunks that hold a changed line (or both sides of removed lines), adjacent top-level ones merged."""
    touched = _Touched(changed)
    wanted = [chunk for chunk in chunks if touched(chunk[0], chunk[1])]
    merged: list[Chunk] = []
    for chunk in wanted:
        if merged and merged[-1][1] == chunk[0] and merged[-1][2] == chunk[2]:
            merged[-1] = (merged[-1][0], chunk[1], chunk[2])
        else:
            merged.append(chunk)
    return merged
