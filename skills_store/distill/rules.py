"""Edit rules: the abstract rewrite a fixing patch made, learned from its changed tokens.

A lesson is worth more than a case note when it says what to change in any code: `time.clock()` ->
`time.perf_counter()`, `<mapping>.iteritems()` -> `<mapping>.items()`, `collections.<ABC>` ->
`collections.abc.<ABC>`. Each replaced line of the patch is tokenized (Python's `tokenize`), aligned with the line
that replaced it (`difflib` over the tokens), and the changed span is widened until it reads as an edit:

- an attribute keeps its owner chain (`clock` -> `time.clock`), a call its parentheses (`time.clock()`), a
  dangling `.` the name after it, a bare insertion its neighbour (`async` -> `async def`);
- a change that holds only the user's names and literals is widened to the call around it
  (`main` -> `main()` inside `asyncio.run(...)`);
- unchanged tokens inside brackets become `...` (`inspect.getargspec(...)`), the user's identifiers become
  placeholders (`<name>`, `<mapping>` for the receiver of a mapping method), literals `<str>` and `<n>`; library
  names, builtins, keywords and operators stay (`names.Names` decides).

Lines removed or added with no counterpart are rewrites too (`@asyncio.coroutine` -> nothing). A rewrite is
*aligned* with the failure when it touches a name the error line names; the aligned ones lead. A rewrite made of
placeholders only (a renamed typo) is no rule: the skill says what changed in words instead.
"""

from __future__ import annotations

import difflib
import io
import keyword
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skills_store.distill.changes import FileDelta
from skills_store.distill.names import ABC_NAMES, BUILTIN_METHODS, MAPPING_METHODS, Names

MAX_REWRITES = 3
MAX_RULE_CHARS = 160
_GAP = 3
_OPEN, _CLOSE = "([{", ")]}"
_WORD_RE = re.compile(r"[A-Za-z_]\w*")
_PLACEHOLDER_RE = re.compile(r"^<\w+>$")


@dataclass(frozen=True)
class Tok:
    kind: str
    """`name`, `op`, `str`, `num` or `other`."""
    text: str


@dataclass(frozen=True)
class Rewrite:
    """One abstract rewrite with the concrete lines it came from."""

    before: str
    after: str
    raw_names: frozenset[str]
    """The identifiers of the changed span as written (to align the rewrite with the error line)."""
    old: str
    new: str
    path: str
    teaches: bool = True
    """Whether a changed token is not the user's own (an operator, keyword, builtin or library name)."""

    @property
    def text(self) -> str:
        return f"{self.before or '(nothing)'} -> {self.after or '(nothing)'}"

    @property
    def is_rule(self) -> bool:
        """Whether it teaches something beyond the user's names: a library name, a builtin, a keyword, an operator."""
        return self.teaches and self.before != self.after


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


def _depths(toks: Sequence[Tok]) -> list[int]:
    depth, out = 0, []
    for t in toks:
        if t.kind == "op" and t.text in _CLOSE:
            depth = max(0, depth - 1)
        out.append(depth)
        if t.kind == "op" and t.text in _OPEN:
            depth += 1
    return out


def _matching(toks: Sequence[Tok], start: int) -> int:
    """Index just past the bracket that closes the one at `start` (or the end of the line)."""
    depth = 0
    for k in range(start, len(toks)):
        if toks[k].text in _OPEN:
            depth += 1
        elif toks[k].text in _CLOSE:
            depth -= 1
            if depth == 0:
                return k + 1
    return len(toks)


class _Span:
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


def _widen(span: _Span, anchored: Callable[[_Span], bool]) -> None:
    for _ in range(40):
        a, b = span.sides()
        prev, nxt = span.before_tok(), span.after_tok()
        starts = {s[0].text for s in (a, b) if s}
        ends = {s[-1].text for s in (a, b) if s}
        if prev is not None and (prev.text == "." or (("." in starts or starts & {"(", "["}) and prev.kind == "name")):
            span.left()
        elif nxt is not None and "." in ends:
            span.right()
        elif nxt is not None and nxt.text == "." and _dotted_change(span) and span.i2 + 1 < len(span.a):
            span.right(2)  # `collections.abc` inserted into `collections.Mapping`: keep the name after it
        elif nxt is not None and nxt.text == "(":
            span.right(_matching(span.a, span.i2) - span.i2)
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


def _dotted_change(span: _Span) -> bool:
    """Whether the change itself adds or removes a `.` (a module path edited, not a name replaced)."""
    return any(t.text == "." for t, eq in zip(span.a, span.equal_a, strict=True) if not eq) or any(
        t.text == "." for t, eq in zip(span.b, span.equal_b, strict=True) if not eq
    )


def _argument_piece(span: _Span) -> bool:
    """The span is part of an argument list: a `,` or a keyword argument's `=` at its own top level."""
    for side in span.sides():
        depths = _depths(side)
        if any(t.text in (",", "=") and d == 0 for t, d in zip(side, depths, strict=True)):
            return True
    return False


def _enclosing_call(span: _Span) -> bool:
    """Widen to the call whose parentheses hold the span; False when there is none."""
    depth = 0
    for k in range(span.i1 - 1, -1, -1):
        t = span.a[k]
        if t.text in _CLOSE:
            depth += 1
        elif t.text in _OPEN:
            if depth == 0:
                start = k
                while start > 0 and (
                    (span.a[start - 1].kind == "name" and not keyword.iskeyword(span.a[start - 1].text))
                    or span.a[start - 1].text == "."
                ):
                    start -= 1
                end = _matching(span.a, k)
                span.left(span.i1 - start)
                span.right(max(0, end - span.i2))
                return True
            depth -= 1
    return False


class _Abstractor:
    """Turns the tokens of a span into rule text, giving each user name one placeholder on both sides."""

    def __init__(self, names: Names) -> None:
        self.names = names
        self.placeholders: dict[str, str] = {}
        self.roles: dict[str, str] = {}

    def learn_roles(self, toks: Sequence[Tok]) -> None:
        for k in range(len(toks) - 2):
            receiver, method = toks[k].text, toks[k + 2].text
            if (
                toks[k].kind == "name"
                and toks[k + 1].text == "."
                and method in MAPPING_METHODS
                and method not in dir(list)
                and not self.names.is_known(receiver)
            ):
                self.roles[receiver] = "mapping"

    def _placeholder(self, name: str) -> str:
        if name not in self.placeholders:
            role = self.roles.get(name, "name")
            n = sum(1 for v in self.placeholders.values() if v.startswith(f"<{role}"))
            self.placeholders[name] = f"<{role}{n + 1 if n else ''}>"
        return self.placeholders[name]

    def word(self, toks: Sequence[Tok], k: int, kept: dict[int, bool], assign: bool = True) -> str:
        t = toks[k]
        if t.kind == "str":
            return "<str>"
        if t.kind == "num":
            return "<n>"
        if t.kind != "name" or keyword.iskeyword(t.text) or keyword.issoftkeyword(t.text):
            kept[k] = True
            return t.text
        prev = toks[k - 1].text if k > 0 else ""
        nxt = toks[k + 1].text if k + 1 < len(toks) else ""
        if prev == ".":
            owner_kept = kept.get(k - 2, False)
            keep = owner_kept or t.text in BUILTIN_METHODS
            if owner_kept and t.text in ABC_NAMES and k >= 2 and toks[k - 2].text in ("collections", "abc"):
                kept[k] = True
                return "<ABC>"
        elif prev == "import" and t.text in ABC_NAMES and any(x.text == "collections" for x in toks[:k]):
            kept[k] = True
            return "<ABC>"
        elif nxt == "=" and _depths(toks)[k] > 0:
            keep = not self.names.is_user(t.text)
        else:
            keep = self.names.is_known(t.text) or (prev == "import" and k >= 2)
        kept[k] = keep
        if keep or not assign:
            return t.text
        return self._placeholder(t.text)

    def render(self, all_toks: list[Tok], lo: int, hi: int, collapse: list[bool]) -> tuple[str, dict[int, bool]]:
        """The span as rule text, and which tokens were kept as they are (not placeholders)."""
        kept: dict[int, bool] = {}
        words: list[str] = []
        for k in range(0, hi):  # owners left of the span decide what their attributes become
            word = self.word(all_toks, k, kept, assign=lo <= k and not collapse[k])
            if k < lo:
                continue
            if collapse[k]:
                if not words or words[-1] != "...":
                    words.append("...")
                continue
            words.append(word)
        return _join(words), kept


def _join(words: list[str]) -> str:
    out = ""
    for k, w in enumerate(words):
        prev = words[k - 1] if k else ""
        tight = (
            not out
            or prev in ("(", "[", "{", ".", "@", "~")
            or w in (")", "]", "}", ",", ":", ".")
            or (w in ("(", "[") and (prev[-1:].isalnum() or prev[-1:] in ")]>_."))
            or ((w == "=" or prev == "=") and out.count("(") > out.count(")"))
        )
        out += w if tight else " " + w
    return out[:MAX_RULE_CHARS]


def _collapse_marks(toks: list[Tok], equal: list[bool], lo: int, hi: int, other_depth_positive: set[int]) -> list[bool]:
    """Which tokens of the span become `...`: unchanged tokens inside brackets (on either side), and bracket
    pairs that are unchanged with everything inside them collapsed."""
    depths = _depths(toks)
    base = depths[lo] if lo < len(toks) else 0
    marks = [
        lo <= k < hi
        and equal[k]
        and toks[k].text not in _OPEN + _CLOSE
        and (depths[k] > base or k in other_depth_positive)
        for k in range(len(toks))
    ]
    for k in sorted(range(lo, hi), key=lambda i: -depths[i]):
        if toks[k].text in _OPEN and equal[k] and (depths[k] > base or k in other_depth_positive):
            end = _matching(toks, k) - 1
            if end < hi and equal[end] and all(marks[i] for i in range(k + 1, end)) and end > k + 1:
                marks[k] = marks[end] = True
    return marks


def rewrites(old: str, new: str, names: Names, path: str = "") -> list[Rewrite]:
    """The abstract rewrites from `old` to `new` (one line each; either may be empty): one per group of changes
    more than `_GAP` tokens apart (`xrange(n) ... xrange(n)` is one rewrite seen twice, not one long one)."""
    a, b = tokens(old), tokens(new)
    ops = [op for op in difflib.SequenceMatcher(None, [t.text for t in a], [t.text for t in b], autojunk=False)
           .get_opcodes() if op[0] != "equal"]  # fmt: skip
    groups: list[list[tuple[str, int, int, int, int]]] = []
    for op in ops:
        if groups and (op[1] - groups[-1][-1][2] <= _GAP or not _balanced(a, b, groups[-1])):
            groups[-1].append(op)
        else:
            groups.append([op])
    out: list[Rewrite] = []
    for group in groups:
        found = _rewrite(a, b, group, names, old, new, path)
        if all(found.text != o.text for o in out):
            out.append(found)
    return out


def _balanced(a: list[Tok], b: list[Tok], group: list[tuple[str, int, int, int, int]]) -> bool:
    """Whether the tokens a group of changes removes and adds open as many brackets as they close."""
    for side, lo, hi in ((a, 1, 2), (b, 3, 4)):
        texts = [side[k].text for op in group for k in range(int(op[lo]), int(op[hi]))]
        if sum(t in _OPEN for t in texts) != sum(t in _CLOSE for t in texts):
            return False
    return True


def _rewrite(
    a: list[Tok], b: list[Tok], ops: list[tuple[str, int, int, int, int]], names: Names, old: str, new: str, path: str
) -> Rewrite:
    span = _Span(a, b, ops)
    abstractor = _Abstractor(names)

    def anchored(s: _Span) -> bool:
        x, y = s.sides()
        return any(
            (t.kind == "op" and t.text not in ",()[]{}=")
            or keyword.iskeyword(t.text)
            or (t.kind == "name" and names.is_known(t.text))
            for t in (*x, *y)
        )

    _widen(span, anchored)
    abstractor.learn_roles(a)
    abstractor.learn_roles(b)
    # An equal run is collapsed when it sits inside brackets on either side: map b's equal tokens onto a's.
    matcher = difflib.SequenceMatcher(None, [t.text for t in a], [t.text for t in b], autojunk=False)
    a_to_b = {i + k: j + k for i, j, n in matcher.get_matching_blocks() for k in range(n)}
    depth_a, depth_b = _depths(a), _depths(b)
    base_a = depth_a[span.i1] if span.i1 < len(a) else 0
    base_b = depth_b[span.j1] if span.j1 < len(b) else 0
    deep_in_b = {i for i, j in a_to_b.items() if span.j1 <= j < span.j2 and depth_b[j] > base_b}
    deep_in_a = {j for i, j in a_to_b.items() if span.i1 <= i < span.i2 and depth_a[i] > base_a}
    before, kept_a = abstractor.render(
        a, span.i1, span.i2, _collapse_marks(a, span.equal_a, span.i1, span.i2, deep_in_b)
    )
    after, kept_b = abstractor.render(
        b, span.j1, span.j2, _collapse_marks(b, span.equal_b, span.j1, span.j2, deep_in_a)
    )
    x, y = span.sides()
    raw = frozenset(t.text for t in (*x, *y) if t.kind == "name" and not keyword.iskeyword(t.text))
    changed = [(a[k], kept_a.get(k, False)) for _, i1, i2, _, _ in ops for k in range(i1, i2)]
    changed += [(b[k], kept_b.get(k, False)) for *_, j1, j2 in ops for k in range(j1, j2)]
    teaches = any(t.kind == "op" or (t.kind == "name" and kept) for t, kept in changed)
    return Rewrite(before, after, raw, old.strip(), new.strip(), path, teaches)


def _similarity(a: str, b: str) -> float:
    words = difflib.SequenceMatcher(None, a.split(), b.split()).ratio()
    return max(words, difflib.SequenceMatcher(None, a.strip(), b.strip()).ratio())


def _pair_lines(removed: list[str], added: list[str]) -> list[tuple[str, str]]:
    """Pair removed with added lines in order, maximising their total similarity (pairs below 0.4 are not made;
    unpaired lines stand alone as a removal or an addition)."""
    n, m = len(removed), len(added)
    score = [[_similarity(r, a) for a in added] for r in removed]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            pair = best[i - 1][j - 1] + score[i - 1][j - 1] if score[i - 1][j - 1] >= 0.4 else -1.0
            best[i][j] = max(best[i - 1][j], best[i][j - 1], pair)
    out: list[tuple[str, str]] = []
    i, j = n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and score[i - 1][j - 1] >= 0.4 and best[i][j] == best[i - 1][j - 1] + score[i - 1][j - 1]:
            out.append((removed[i - 1], added[j - 1]))
            i, j = i - 1, j - 1
        elif i > 0 and (j == 0 or best[i][j] == best[i - 1][j]):
            out.append((removed[i - 1], ""))
            i -= 1
        else:
            out.append(("", added[j - 1]))
            j -= 1
    out.reverse()
    return [(o, n) for o, n in out if (o.strip() or n.strip()) and not (o.strip() + n.strip()).startswith("#")]


def derive(files: Sequence[FileDelta], names: Names, error_line: str) -> list[Rewrite]:
    """The rewrites of a fix, those aligned with `error_line` first (at most `MAX_REWRITES`, rules only)."""
    found: list[Rewrite] = []
    for delta in files:
        if not delta.path.endswith((".py", ".pyi")):
            continue  # the rules are Python token rewrites; other files are described in words
        for removed, added in delta.blocks:
            for old, new in _pair_lines(removed, added):
                for rw in rewrites(old, new, names, delta.path):
                    if rw.is_rule and all(rw.text != f.text for f in found):
                        found.append(rw)
    mentioned = set(_WORD_RE.findall(error_line))

    def score(rw: Rewrite) -> int:
        overlap = rw.raw_names & mentioned
        return 2 * len({n for n in overlap if names.is_known(n) or n in BUILTIN_METHODS}) + len(overlap)

    ranked = sorted(found, key=lambda rw: -score(rw))
    return ranked[:MAX_REWRITES]


def aligned(rewrites: Sequence[Rewrite], error_line: str) -> bool:
    """Whether the leading rewrite touches a name the error line names."""
    return bool(rewrites) and bool(rewrites[0].raw_names & set(_WORD_RE.findall(error_line)))
