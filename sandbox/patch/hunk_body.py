"""The lines of a unified diff's hunks: a header's anchor text, each line's operation, a hunk filled from its
body lines, and the `\\ No newline at end of file` markers checked and applied to the hunk's two sides."""

from __future__ import annotations

import re

from sandbox.patch.ops import Hunk, HunkLine, MalformedPatch

_NUMBERS_RE = re.compile(r"-\d|\+\d")


def header_anchor(header: str) -> str:
    """The text of a hunk header without line numbers (`@@ class B:`, `@@ @@ class B:`, `@@ class B: @@`), or ""
    for a bare `@@` / `@@ @@` or a header whose numbers are malformed."""
    text = header[2:].strip()
    if text.startswith("@@"):
        text = text[2:].strip()
    if text.endswith("@@"):
        text = text[:-2].strip()
    return "" if _NUMBERS_RE.match(text) else text


new_hunk_line = tuple.__new__  # builds a HunkLine without the NamedTuple's Python-level __new__ (parsing hot path)


def line_op(line: str) -> str | None:
    if line in ("", "\r"):
        return " "
    head = line[0]
    return head if head in " -+\\" else None


def fill_hunk(hunk: Hunk, body: list[str]) -> None:
    out = hunk.lines
    append, new = out.append, new_hunk_line
    for raw in body:
        cr = raw[-1:] == "\r"
        text = raw[:-1] if cr else raw
        head = text[:1]
        if head == "\\":
            if out:
                mark_no_newline(hunk)
            continue
        append(new(HunkLine, (head or " ", text[1:], cr)))


def check_eof_marks(hunk: Hunk) -> None:
    """A `\\ No newline at end of file` marker says the line before it is its side's last line of the file, so
    only lines of the other side may follow it: one in the middle of a hunk would take the final newline off a file
    whose last line is not even the one it follows."""
    assert hunk.eof_marks is not None
    for at in hunk.eof_marks:
        op = hunk.lines[at - 1].op
        allowed = {"-": "+", "+": "-", " ": ""}[op]
        if any(line.op != allowed for line in hunk.lines[at:]):
            raise MalformedPatch(
                hunk.patch_line,
                f"in hunk {hunk.number}, a `\\ No newline at end of file` marker follows line {at} of the hunk, but"
                " lines of its side come after it: the marker only follows the last line of the old or the new file",
                "move the marker after the hunk's last `-` or `+` line (or its last context line), or remove it",
            )


def mark_no_newline(hunk: Hunk) -> None:
    if hunk.eof_marks is None:
        hunk.eof_marks = []
    hunk.eof_marks.append(len(hunk.lines))
    last = hunk.lines[-1].op
    if last in " -":
        hunk.old_eof_newline = False
    if last in " +":
        hunk.new_eof_newline = False
    if hunk.old_eof_newline is False and hunk.new_eof_newline is None:
        hunk.new_eof_newline = True
    if hunk.new_eof_newline is False and hunk.old_eof_newline is None:
        hunk.old_eof_newline = True
