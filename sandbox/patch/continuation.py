"""Which lines of code continue a statement rather than start one, for the re-indentation of a hunk's added lines.

A continuation line's indentation is alignment, not a level: `compute(arg1,` then `arg2)` under the `(` moves with
the name before the bracket (a hand-formatted call against black's, an old function name against a new one). So
the shift between a patch's and a file's indentation is read from the lines that start statements only
(`sandbox.patch.indent.context_pairs`). A line continues a statement when it begins inside a `(` or `[`, inside a
`{` that has text after it on its line (`{'a': 1,` then `'b': 2}`; a `{` that ends its line opens a block or a
literal whose lines are indented by levels: JS, C, Go, a Python dict written one key a line), after a line ending
in `\\`, or inside a triple-quoted string. The scan is a sketch of a tokenizer for any language: quotes end at the
end of their line (an apostrophe in prose), a `#` after a space or at the start of the line begins a comment, and a
line indented not at all that starts with a letter, `_` or `@` starts a statement whatever came before (a bracket
left open by prose does not reach past it).
"""

from __future__ import annotations

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(_OPEN.values())
_LOOK_BACK = 50
"""Lines above a hunk searched for a top-level line to begin the scan at (the bracket a hunk's first lines are in)."""


def scan_start(lines: list[str], first: int) -> int:
    """Where to begin scanning for the lines from index `first` on: the nearest top-level line above it, within
    `_LOOK_BACK` lines, or `first` itself."""
    for index in range(first, max(first - _LOOK_BACK, 0) - 1, -1):
        if _top_level(lines[index]):
            return index
    return first


def continued(lines: list[str]) -> list[bool]:
    """For each line, whether it continues a statement begun on a line above it (see the module doc)."""
    flags: list[bool] = []
    stack: list[tuple[str, bool]] = []  # open brackets, innermost last: (bracket, whether text follows it)
    quote = ""  # the triple quote a string spanning lines is in, "" outside one
    backslash = False
    for line in lines:
        if not quote and not backslash and _top_level(line):
            stack.clear()
        flags.append(bool(quote) or backslash or (bool(stack) and (stack[-1][0] != "{" or stack[-1][1])))
        quote = _scan(line, stack, quote)
        backslash = not quote and line.rstrip().endswith("\\")
    return flags


def _top_level(line: str) -> bool:
    return line[:1].isalnum() or line[:1] in "_@"


def _scan(line: str, stack: list[tuple[str, bool]], quote: str) -> str:
    """Push and pop the line's brackets on `stack`; return the triple quote the line ends inside ("" if none)."""
    opened: list[tuple[int, int]] = []  # the brackets opened on this line: (index in `stack`, column)
    last = -1  # the column of the line's last character of code
    i, size = 0, len(line)
    while i < size:
        char = line[i]
        if quote:
            if line.startswith(quote, i):
                i, quote, last = i + 3, "", i + 2
            else:
                i += 2 if char == "\\" else 1
            continue
        if char in "'\"":
            if line.startswith(char * 3, i):
                quote, i, last = char * 3, i + 3, i + 2
            else:
                i = _string_end(line, i)
                last = i - 1
            continue
        if char == "#" and (i == 0 or line[i - 1] in " \t"):
            break  # a comment
        if not char.isspace():
            last = i
        if char in _OPEN:
            opened.append((len(stack), i))
            stack.append((char, False))
        elif char in _CLOSE and stack:
            stack.pop()
            while opened and opened[-1][0] >= len(stack):
                opened.pop()
        i += 1
    for at, column in opened:  # a bracket with code after it on its line: the lines inside it align to that code
        stack[at] = (stack[at][0], column != last)
    return quote


def _string_end(line: str, start: int) -> int:
    """The index just past the quoted string that begins at `start`, or the end of the line when it is not closed
    there."""
    char, i = line[start], start + 1
    while i < len(line):
        if line[i] == "\\":
            i += 2
        elif line[i] == char:
            return i + 1
        else:
            i += 1
    return len(line)
