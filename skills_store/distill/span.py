"""Tokens and the changed span of one rewritten line: where an edit rule starts and ends.

A replaced line and its replacement are tokenized (Python's `tokenize`; a line it cannot finish keeps what it
read) and aligned with `difflib`. Outside the changed span the two lines are equal, so the span is widened on
both sides at once until it reads as an edit (see `rules` for what each widening is for).
"""

from __future__ import annotations

import difflib
import io
import keyword
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass

OPEN, CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Tok:
    kind: str
    """`name`, `op`, `str`, `num` or `other`."""
    text: str


def tokens(line: str) -> list[Tok]:
    """The tokens of one source line; a line `tokenize` cannot finish (an open bracket) keeps what it read."""
    out: list[Tok] = []
    kinds = {tokenize.NAME: "name", tokenize.OP: "op", tokenize.STRING: "str", tokenize.NUMBER: "num"}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                continue
            if tok.type == tokenize.ENDMARKER:
                break
            out.append(Tok(kinds.get(tok.type, "other"), tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def depths(toks: Sequence[Tok]) -> list[int]:
    depth, out = 0, []
    for t in toks:
        if t.kind == "op" and t.text in CLOSE:
            depth = max(0, depth - 1)
        out.append(depth)
        if t.kind == "op" and t.text in OPEN:
            depth += 1
    return out


def matching(toks: Sequence[Tok], start: int) -> int:
    """Index just past the bracket that closes the one at `start` (or the end of the line)."""
    depth = 0
    for k in range(start, len(toks)):
        if toks[k].text in OPEN:
            depth += 1
        elif toks[k].text in CLOSE:
            depth -= 1
            if depth == 0:
                return k + 1
    return len(toks)


class Span:
    """The changed span over both lines; outside it the two lines are equal, so widening moves both sides."""

    def __init__(self, a: list[Tok], b: list[Tok], ops: list[tuple[str, int, int, int, int]]) -> None:
        self.a, self.b = a, b
        self.i1, self.i2, self.j1, self.j2 = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
        self.equal_a = [False] * len(a)
        for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(
            None, [t.text for t in a], [t.text for t in b], autojunk=False
        ).get_opcodes():
            if tag == "equal":
                for k in range(i1, i2):
                    self.equal_a[k] = True  # fmt: skip
        self.equal_b = [False] * len(b)
        for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(
            None, [t.text for t in a], [t.text for t in b], autojunk=False
        ).get_opcodes():
            if tag == "equal":
                for k in range(j1, j2):
                    self.equal_b[k] = True  # fmt: skip

    def left(self, n: int = 1) -> None:
        n = min(n, self.i1, self.j1)
        self.i1, self.j1 = self.i1 - n, self.j1 - n

    def right(self, n: int = 1) -> None:
        n = min(n, len(self.a) - self.i2, len(self.b) - self.j2)
        self.i2, self.j2 = self.i2 + n, self.j2 + n

    def before_tok(self) -> Tok | None:
        return self.a[self.i1 - 1] if self.i1 > 0 else None

    def after_tok(self) -> Tok | None:
        return self.a[self.i2] if self.i2 < len(self.a) else None

    def sides(self) -> tuple[list[Tok], list[Tok]]:
        return self.a[self.i1 : self.i2], self.b[self.j1 : self.j2]


def widen(span: Span, anchored: Callable[[Span], bool]) -> None:
    for _ in range(40):
        a, b = span.sides()
        prev, nxt = span.before_tok(), span.after_tok()
        starts = {s[0].text for s in (a, b) if s}
        ends = {s[-1].text for s in (a, b) if s}
        if prev is not None and (prev.text == "." or (("." in starts or starts & {"(", "["}) and prev.kind == "name")):
            span.left()
        elif prev is not None and prev.text in CLOSE and "." in starts:
            span.left(span.i1 - opening(span.a, span.i1 - 1))  # `s.strip().decode(...)`: the owner is a call
        elif nxt is not None and "." in ends:
            span.right()
        elif nxt is not None and nxt.text == "." and _dotted_change(span) and span.i2 + 1 < len(span.a):
            span.right(2)  # `collections.abc` inserted into `collections.Mapping`: keep the name after it
        elif nxt is not None and nxt.text == "(":
            span.right(matching(span.a, span.i2) - span.i2)
        elif not a or not b:
            if nxt is not None and nxt.kind == "name":
                span.right()
            elif prev is not None:
                span.left()
            else:
                return
        elif (not anchored(span) or _argument_piece(span)) and _enclosing_call(span):
            continue
        else:
            return


def opening(toks: Sequence[Tok], close: int) -> int:
    """Index of the bracket that the one at `close` closes (0 when the line does not open it)."""
    depth = 0
    for k in range(close, -1, -1):
        if toks[k].text in CLOSE:
            depth += 1
        elif toks[k].text in OPEN:
            depth -= 1
            if depth == 0:
                return k
    return 0


def _trailer(side: Sequence[Tok]) -> int:
    """Length of the chained link that ends `side` (`.strip()`, `.name`, `.get(k)[0]`); 0 when it ends otherwise."""
    k = len(side) - 1
    while k >= 0 and side[k].text in CLOSE:
        k = opening(side, k) - 1
    if k >= 1 and side[k].kind == "name" and not keyword.iskeyword(side[k].text) and side[k - 1].text == ".":
        return len(side) - (k - 1)
    return 0


def trim(span: Span, users: Callable[[Tok], bool]) -> None:
    """Drop what the widened span holds on both sides but the edit did not change: a chained link that ends both
    sides alike (`s.decode('utf-8').strip()` -> `s.strip()` is `s.decode('utf-8')` -> `s`, whatever call follows),
    and the leading links of an owner chain of the user's names down to the owner the edit works on
    (`self.data.decode(...)` -> `self.data` is `data.decode(...)` -> `data`). Library owners stay (`os.path`)."""
    while not _path_change(span):  # `collections.abc` put into `collections.Mapping` keeps the name after it
        a, b = span.sides()
        n = _trailer(a)
        if not n or n >= len(a) or n >= len(b) or [t.text for t in a[-n:]] != [t.text for t in b[-n:]]:
            break
        span.i2, span.j2 = span.i2 - n, span.j2 - n
    while True:
        a, b = span.sides()
        if not (
            len(a) > 2
            and len(b) > 2
            and a[0] == b[0]
            and a[0].kind == "name"
            and users(a[0])
            and a[1].text == b[1].text == "."
            and a[2] == b[2]
            and a[2].kind == "name"
            and users(a[2])
            and all(len(side) == 3 or side[3].text == "." for side in (a, b))  # the owner left is a bare name
        ):
            break
        span.i1, span.j1 = span.i1 + 2, span.j1 + 2


def _dotted_change(span: Span) -> bool:
    """Whether the change itself adds or removes a `.` (a module path edited, not a name replaced)."""
    return any(t.text == "." for t, eq in zip(span.a, span.equal_a, strict=True) if not eq) or any(
        t.text == "." for t, eq in zip(span.b, span.equal_b, strict=True) if not eq
    )


def _path_change(span: Span) -> bool:
    """Whether the change only adds or removes dotted names (`collections.Mapping` -> `collections.abc.Mapping`)."""
    a, b = span.sides()
    changed = [t for t, eq in zip(a, span.equal_a[span.i1 : span.i2], strict=True) if not eq]
    changed += [t for t, eq in zip(b, span.equal_b[span.j1 : span.j2], strict=True) if not eq]
    return any(t.text == "." for t in changed) and all(t.text == "." or t.kind == "name" for t in changed)


def _argument_piece(span: Span) -> bool:
    """The span is part of an argument list: a `,` or a keyword argument's `=` at its own top level."""
    for side in span.sides():
        levels = depths(side)
        if any(t.text in (",", "=") and d == 0 for t, d in zip(side, levels, strict=True)):
            return True
    return False


def _enclosing_call(span: Span) -> bool:
    """Widen to the call whose parentheses hold the span; False when there is none."""
    depth = 0
    for k in range(span.i1 - 1, -1, -1):
        t = span.a[k]
        if t.text in CLOSE:
            depth += 1
        elif t.text in OPEN:
            if depth == 0:
                start = k
                while start > 0 and (
                    (span.a[start - 1].kind == "name" and not keyword.iskeyword(span.a[start - 1].text))
                    or span.a[start - 1].text == "."
                ):
                    start -= 1
                end = matching(span.a, k)
                span.left(span.i1 - start)
                span.right(max(0, end - span.i2))
                return True
            depth -= 1
    return False


def balanced(a: list[Tok], b: list[Tok], group: list[tuple[str, int, int, int, int]]) -> bool:
    """Whether the tokens a group of changes removes and adds open as many brackets as they close."""
    for side, lo, hi in ((a, 1, 2), (b, 3, 4)):
        texts = [side[k].text for op in group for k in range(int(op[lo]), int(op[hi]))]
        if sum(t in OPEN for t in texts) != sum(t in CLOSE for t in texts):
            return False
    return True
