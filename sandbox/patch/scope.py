"""Keeping a reduced-context (fuzz) match inside the function the hunk was written for.

GNU patch's fuzz drops outer context lines, and with them what says *where* the edit belongs: a hunk whose context
is `def add(a, b):` and whose change is `-    return a * b` would land inside `mul()` once that line is dropped.
`git apply` refuses every fuzz; we accept it only when nothing that locates the hunk was lost:

- a dropped context line that opens a scope (`def`, `class`, `function`, ..., a C/Java function header
  `int f(void)`, a TOML `[section]`, a YAML `key:` above the hunk's lines, a Markdown heading) must still be where
  the hunk puts it;
- a hunk whose new lines already stand where it states (the same patch sent again after a retry) is not applied
  again wherever its removed lines still occur;
- the function context of the hunk header (`@@ -5,3 +5,3 @@ def add(a, b):`, or the last Codex `@@ def add` anchor)
  must be the scope the match lies in: found above it with no other scope opened in between at its level.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sandbox.patch.textfile import fold

#: A line that opens a named scope in the common languages (Python, JS/TS, Go, Rust, Ruby, PHP, shell functions).
SCOPE_RE = re.compile(
    r"^\s*(?:@\w|(?:export\s+|pub(?:\(\w+\))?\s+|async\s+|static\s+|public\s+|private\s+|protected\s+)*"
    r"(?:def|class|function|func|fn|impl|trait|struct|enum|interface|module|sub)\b)"
)
#: A C/C++/Java/C#/JS function or method header: `int f(void)`, `public int f() {`, `static char *g(int a) {`,
#: `run() {`; not a statement (`if (x) {`, a call ending in `;`, Python's `assert f(x)`).
_CALL_HEAD_RE = re.compile(
    r"^\s*(?!(?:if|for|foreach|while|switch|return|catch|else|do|sizeof|case|new|throw|await|yield|assert|not|and|"
    r"or|in|is|lambda|raise|del|print|import|from|elif|with|except|using|lock|typeof|delete|go|defer)\b)"
    r"(?:(?:[\w$][\w$<>\[\]*&:,.]*[\s*&]+)+|(?=[^(]*\(.*\{\s*$))[\w$~][\w$:.]*\s*\([^;=]*\)\s*"
    r"(?:const\s*|override\s*|noexcept\s*)*(?:throws\s+[\w$.,\s]+)?\{?\s*$"
)
#: A TOML/INI `[section]` or `[[table]]` header.
_SECTION_RE = re.compile(r"^\s*\[\[?\s*[\w.\-\"' ]+\s*\]\]?\s*(?:[#;].*)?$")
#: A key that opens a mapping (YAML `server:`), with nothing after it but a comment; not Python's `else:`/`try:`.
_KEY_OPENER_RE = re.compile(
    r"^\s*(?!(?:else|try|except|finally|do|default|public|private|protected)\s*:)[\w.\-\"'$]+\s*:\s*(?:#.*)?$"
)
#: A Markdown heading below the title (`## Usage`); a single `#` is a comment in too many languages.
_MD_HEADING_RE = re.compile(r"^#{2,6}\s+\S")
_HEADING_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")
_OPENER = re.compile(r"^[A-Za-z_$@]")

Normalise = Callable[[str], str] | None


def heading(header: str, anchors: list[str]) -> str:
    """The function context a hunk names: the last Codex anchor, else the text after a unified header's `@@`."""
    if anchors:
        return anchors[-1]
    match = _HEADING_RE.match(header.strip())
    return match.group(1).strip() if match else ""


def dropped_scope_line(
    lines: list[str], old: list[str], front: int, back: int, start: int, norm: Normalise
) -> str | None:
    """The first context line dropped by fuzz that opens a scope and is not where the hunk puts it, else None.

    `start` is where the reduced needle (`old[front:len(old) - back]`) matched in `lines`.
    """
    end = start + len(old) - front - back
    placed = [(old[i], start - front + i) for i in range(front)]
    placed += [(old[len(old) - back + i], end + i) for i in range(back)]
    same = norm or (lambda text: text)
    kept = [_indent(text) for text in old[front : len(old) - back] if text.strip()]
    inner = min(kept) if kept else 0
    for text, at in placed:
        if opens_scope(text, inner) and not (0 <= at < len(lines) and same(lines[at]) == same(text)):
            return text.strip()
    return None


def opens_scope(text: str, inner: int) -> bool:
    """Whether a context line says which function, class, section or mapping the hunk's lines are in: a keyword
    opener (`SCOPE_RE`), a C-family function header, a `[section]` header, a Markdown heading, or a `key:` line
    indented less than the hunk's kept lines (`inner`), the mapping they belong to."""
    if SCOPE_RE.match(text) or _CALL_HEAD_RE.match(text) or _SECTION_RE.match(text) or _MD_HEADING_RE.match(text):
        return True
    return _indent(text) < inner and bool(_KEY_OPENER_RE.match(text))


def outside_heading(lines: list[str], start: int, context: str) -> bool:
    """True when the match at `start` does not lie in the scope `context` names (see the module docstring)."""
    want = fold(context)
    if not want:
        return False
    crossed: list[str] = []
    for j in range(min(start, len(lines)) - 1, -1, -1):
        line = lines[j]
        if not line.strip():
            continue
        if fold(line).startswith(want) or (len(want) > 20 and want.startswith(fold(line))):
            level = _indent(line)
            return any(_leaves(other, level) for other in crossed)
        crossed.append(line)
    return True


def _leaves(line: str, level: int) -> bool:
    """Whether `line`, met between the heading (indented `level`) and the match, opens another scope or leaves it."""
    stripped = line.lstrip()
    if not _OPENER.match(stripped):
        return False
    indent = _indent(line)
    return indent < level or (indent == level and (level == 0 or bool(SCOPE_RE.match(line))))


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def already_applied(lines: list[str], new: list[str], at: int) -> str | None:
    """Why a fuzz match must not be taken when the hunk's new side (`new`) already stands at index `at`, its stated
    place (whitespace aside): the patch was applied before, and its removed lines elsewhere belong to other code."""
    if not new or at < 0 or at + len(new) > len(lines):
        return None
    if any(a.strip() != b.strip() for a, b in zip(lines[at : at + len(new)], new, strict=True)):
        return None
    return f"its new lines are already at line {at + 1}, where it says it goes (was the patch applied before?)"
