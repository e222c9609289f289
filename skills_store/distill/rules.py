"""Edit rules: the abstract rewrite a fixing patch made, learned from its changed tokens.

A lesson is worth more than a case note when it says what to change in any code: `time.clock()` ->
`time.perf_counter()`, `<mapping>.iteritems()` -> `<mapping>.items()`, `collections.<ABC>` ->
`collections.abc.<ABC>`. Each replaced line of the patch is tokenized (Python's `tokenize`), aligned with the line
that replaced it (`difflib` over the tokens), and the changed span is widened until it reads as an edit:

- an attribute keeps its owner chain (`clock` -> `time.clock`), a call its parentheses (`time.clock()`), a
  dangling `.` the name after it, a bare insertion its neighbour (`async` -> `async def`);
- a change that holds only the user's names and literals is widened to the call around it
  (`main` -> `main()` inside `asyncio.run(...)`);
- what both sides then share is trimmed (`span.trim`): an unchanged call chained after the edit
  (`s.decode('utf-8').strip()` -> `s.strip()` is `<name>.decode(<str>)` -> `<name>`, as with `.lower()` after it)
  and the user's owner chain above the owner the edit works on (`self.data.decode(...)` -> `<name>.decode(...)`);
- unchanged tokens inside brackets become `...` (`inspect.getargspec(...)`), the user's identifiers become
  placeholders (`<name>`, `<mapping>` for the receiver of a mapping method), literals `<str>` and `<n>`; library
  names, builtins, keywords and operators stay (`names.Names` decides).

Lines removed or added with no counterpart are rewrites too (`@asyncio.coroutine` -> nothing). A rewrite is
*aligned* with the failure when it touches a name the error line names; the aligned ones lead. A rewrite made of
placeholders only (a renamed typo) is no rule: the skill says what changed in words instead.
"""

from __future__ import annotations

import difflib
import keyword
import re
from collections.abc import Sequence
from dataclasses import dataclass

from skills_store.distill.changes import FileDelta
from skills_store.distill.names import ABC_NAMES, BUILTIN_METHODS, MAPPING_METHODS, Names
from skills_store.distill.span import CLOSE, OPEN, Span, Tok, balanced, depths, matching, tokens, trim, widen

MAX_REWRITES = 3
#: Removed x added lines of one block above which lines are paired in order instead of by similarity.
MAX_PAIRING = 400
MAX_RULE_CHARS = 160
_GAP = 3
_WORD_RE = re.compile(r"[A-Za-z_]\w*")
_PLACEHOLDER_RE = re.compile(r"^<\w+>$")


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


class _Abstractor:
    """Turns the tokens of a span into rule text, giving each user name one placeholder on both sides."""

    def __init__(self, names: Names) -> None:
        self.names = names
        self.placeholders: dict[str, str] = {}
        self.roles: dict[str, str] = {}
        self.user_attributes: set[str] = set()
        """Attributes this rewrite renames to or from one of the user's: a typo fixed, not a library's API."""

    def library_attribute(self, name: str) -> bool:
        return name not in self.user_attributes and self.names.is_library_attribute(name)

    def learn_attributes(
        self, a: Sequence[Tok], b: Sequence[Tok], ops: Sequence[tuple[str, int, int, int, int]]
    ) -> None:
        """`self.totl` -> `self.total`: `totl` is defined nowhere, but it is a misspelling of the user's `total`."""
        changed = {a[k].text for _, i1, i2, _, _ in ops for k in range(i1, i2) if k > 0 and a[k - 1].text == "."}
        changed |= {b[k].text for *_, j1, j2 in ops for k in range(j1, j2) if k > 0 and b[k - 1].text == "."}
        if any(not self.names.is_library_attribute(n) and n not in BUILTIN_METHODS for n in changed):
            self.user_attributes |= changed

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

    def word(self, toks: Sequence[Tok], k: int, kept: dict[int, bool], assign: bool = True, start: int = -1) -> str:
        """The rule text of `toks[k]`; the token at `start` (where the span begins) reads as a bare name even after a
        `.`: the span was trimmed to the owner the edit works on (`self.data.decode(...)` -> `<name>.decode(...)`)."""
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
        if prev == "." and k != start:
            owner_kept = kept.get(k - 2, False)
            keep = owner_kept or t.text in BUILTIN_METHODS or self.library_attribute(t.text)
            if owner_kept and t.text in ABC_NAMES and k >= 2 and toks[k - 2].text in ("collections", "abc"):
                kept[k] = True
                return "<ABC>"
        elif prev == "import" and t.text in ABC_NAMES and any(x.text == "collections" for x in toks[:k]):
            kept[k] = True
            return "<ABC>"
        elif nxt == "=" and depths(toks)[k] > 0:
            keep = not self.names.is_user(t.text)
        else:
            # `from json import loads` keeps `loads`; `from helpers import parse_line` (the user's module) does not.
            from_users = (
                len(toks) > 1 and toks[0].text == "from" and (toks[1].text == "." or self.names.is_user(toks[1].text))
            )
            keep = self.names.is_known(t.text) or (prev == "import" and k >= 2 and not from_users)
        kept[k] = keep
        if keep or not assign:
            return t.text
        return self._placeholder(t.text)

    def render(self, all_toks: list[Tok], lo: int, hi: int, collapse: list[bool]) -> tuple[str, dict[int, bool]]:
        """The span as rule text, and which tokens were kept as they are (not placeholders)."""
        kept: dict[int, bool] = {}
        words: list[str] = []
        for k in range(0, hi):  # owners left of the span decide what their attributes become
            word = self.word(all_toks, k, kept, assign=lo <= k and not collapse[k], start=lo)
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
    levels = depths(toks)
    base = levels[lo] if lo < len(toks) else 0
    marks = [
        lo <= k < hi
        and equal[k]
        and toks[k].text not in OPEN + CLOSE
        and (levels[k] > base or k in other_depth_positive)
        for k in range(len(toks))
    ]
    for k in sorted(range(lo, hi), key=lambda i: -levels[i]):
        if toks[k].text in OPEN and equal[k] and (levels[k] > base or k in other_depth_positive):
            end = matching(toks, k) - 1
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
        if groups and (op[1] - groups[-1][-1][2] <= _GAP or not balanced(a, b, groups[-1])):
            groups[-1].append(op)
        else:
            groups.append([op])
    out: list[Rewrite] = []
    for group in groups:
        found = _rewrite(a, b, group, names, old, new, path)
        if all(found.text != o.text for o in out):
            out.append(found)
    return out


def _rewrite(
    a: list[Tok], b: list[Tok], ops: list[tuple[str, int, int, int, int]], names: Names, old: str, new: str, path: str
) -> Rewrite:
    span = Span(a, b, ops)
    abstractor = _Abstractor(names)

    def anchored(s: Span) -> bool:
        x, y = s.sides()
        return any(
            (t.kind == "op" and t.text not in ",()[]{}=")
            or keyword.iskeyword(t.text)
            or (t.kind == "name" and names.is_known(t.text))
            for t in (*x, *y)
        )

    widen(span, anchored)
    trim(span, lambda t: not keyword.iskeyword(t.text) and not names.is_known(t.text))
    abstractor.learn_roles(a)
    abstractor.learn_roles(b)
    abstractor.learn_attributes(a, b, ops)
    # An equal run is collapsed when it sits inside brackets on either side: map b's equal tokens onto a's.
    matcher = difflib.SequenceMatcher(None, [t.text for t in a], [t.text for t in b], autojunk=False)
    a_to_b = {i + k: j + k for i, j, n in matcher.get_matching_blocks() for k in range(n)}
    depth_a, depth_b = depths(a), depths(b)
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
    if n * m > MAX_PAIRING:  # a block this big is a rewrite of the code, not an edit a rule describes
        return [(o, a) for o, a in zip(removed, added, strict=False) if (o.strip() or a.strip())]
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
