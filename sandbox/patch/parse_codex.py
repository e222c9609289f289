"""Parser for the Codex envelope: `*** Begin Patch` ... `*** End Patch` with Add, Delete, Update and Move.

Hunks carry no line numbers: they are placed by their context lines and optional `@@ <line>` anchors.
"""

from __future__ import annotations

import re

from sandbox.patch.ops import FileKind, FilePatch, Hunk, HunkLine, MalformedPatch, PathChoice

BEGIN = "*** Begin Patch"
END = "*** End Patch"
_FILE_RE = re.compile(r"^\*\*\* (Add|Delete|Update) File:\s*(.*?)\s*$")
_MOVE_RE = re.compile(r"^\*\*\* Move to:\s*(.*?)\s*$")
_EOF_MARK = "*** End of File"
_UNIFIED_AT = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_HINT = "each line of a hunk starts with ' ' (context), '-' (remove) or '+' (add); a hunk starts with '@@'"


def parse_codex(lines: list[str], begin: int) -> tuple[list[FilePatch], int]:
    """Parse the envelope whose `*** Begin Patch` is `lines[begin]`: its sections and the index of its `*** End
    Patch`; the lines after that are ignored. A section's header may be padded with whitespace (Codex trims it)."""
    out: list[FilePatch] = []
    i = begin + 1
    while i < len(lines):
        line = lines[i].strip()
        if line == END:
            return out, i
        if not line:
            i += 1
            continue
        match = _FILE_RE.match(line)
        if match is None:
            raise MalformedPatch(
                i + 1,
                f"expected `*** Add File:`, `*** Delete File:`, `*** Update File:` or `{END}`, "
                f"got {lines[i].rstrip()[:80]!r}",
                "start every file section with one of those headers",
            )
        verb, path = match.group(1), match.group(2)
        if not path:
            raise MalformedPatch(i + 1, f"`*** {verb} File:` names no file", "put the file's relative path after it")
        if verb == "Add":
            section, i = _add(lines, i, path)
        elif verb == "Delete":
            section = FilePatch("delete", PathChoice.exact(path), i + 1, "codex", check_content=False)
            i += 1
        else:
            section, i = _update(lines, i, path)
        out.append(section)
    raise MalformedPatch(
        len(lines), f"the patch ends without `{END}` (was it cut off?)", f"finish the envelope with `{END}`"
    )


def _add(lines: list[str], start: int, path: str) -> tuple[FilePatch, int]:
    body: list[HunkLine] = []
    blank_tail = 0
    i = start + 1
    while i < len(lines) and not _ends_added_file(lines[i]):
        raw = lines[i]
        cr = raw.endswith("\r")
        text = raw[:-1] if cr else raw
        if text.startswith("+"):
            body.append(HunkLine("+", text[1:], cr))
            blank_tail = 0
        elif text == "":  # a bare blank line: an empty line of the file, unless only blank lines follow
            body.append(HunkLine("+", "", cr))
            blank_tail += 1
        else:
            raise MalformedPatch(
                i + 1, f"a line of the added file {path} does not start with '+'", "prefix every line of it with '+'"
            )
        i += 1
    if blank_tail:
        del body[-blank_tail:]
    hunk = Hunk(1, start + 1, f"*** Add File: {path}", body, old_start=0)
    return FilePatch("add", PathChoice.exact(path), start + 1, "codex", [hunk] if body else []), i


def _ends_added_file(line: str) -> bool:
    """A line after an added file's `+` lines that starts what follows it: a `*** ` line, or a padded header or end."""
    if line.startswith("*** "):
        return True
    stripped = line.strip()
    return line[:1].isspace() and (stripped == END or _FILE_RE.match(stripped) is not None)


def _update(lines: list[str], start: int, path: str) -> tuple[FilePatch, int]:
    kind: FileKind = "modify"
    section = FilePatch(kind, PathChoice.exact(path), start + 1, "codex")
    i = start + 1
    if i < len(lines):
        move = _MOVE_RE.match(lines[i].rstrip())
        if move is not None:
            if not move.group(1):
                raise MalformedPatch(i + 1, "`*** Move to:` names no file", "put the new relative path after it")
            section.kind = "rename"
            section.new_path = PathChoice.exact(move.group(1))
            i += 1
    current: Hunk | None = None
    while i < len(lines):
        raw = lines[i]
        text = raw.rstrip("\r")
        if text.startswith("@@"):
            anchor = text[2:].strip()
            if current is not None:  # blank lines before the next `@@` separate the chunks (not empty context)
                _trim_trailing_blanks([current], lines, i)
            if current is None or current.lines:
                current = Hunk(len(section.hunks) + 1, i + 1, text, [])
                section.hunks.append(current)
            elif current.header == "@@" and not current.anchors:
                current.header = text
            numbers = _UNIFIED_AT.match(text)
            if numbers is not None:  # a unified `@@ -l,n +l,n @@` header: a position hint, not an anchor
                old_line, old_count = int(numbers.group(1)), numbers.group(2)
                current.old_start = old_line if old_count == "0" else max(old_line - 1, 0)
            elif anchor:
                current.anchors.append(anchor)
        elif text.rstrip() == _EOF_MARK:
            if current is None or not current.lines:
                raise MalformedPatch(i + 1, f"`{_EOF_MARK}` follows no hunk lines", "put it after a hunk's last line")
            current.at_eof = True
            current = None
        elif text.startswith("*** "):
            break
        elif text == "" and current is None:
            pass  # a blank line between hunks
        elif text == "" or text[0] in " -+":
            if current is None:
                current = Hunk(len(section.hunks) + 1, i + 1, "@@", [])
                section.hunks.append(current)
            op = text[0] if text else " "
            current.lines.append(HunkLine(op, text[1:], raw.endswith("\r")))  # type: ignore[arg-type]
        else:
            raise MalformedPatch(i + 1, f"unexpected line {text[:80]!r} in the update of {path}", _HINT)
        i += 1
    _trim_trailing_blanks(section.hunks, lines, i)
    empty = next((h for h in section.hunks if not h.lines), None)
    if empty is not None:
        raise MalformedPatch(empty.patch_line, f"hunk {empty.number} of {path} has no lines", _HINT)
    if not section.hunks and section.kind == "modify":
        raise MalformedPatch(start + 1, f"`*** Update File: {path}` has no hunks", _HINT)
    return section, i


def _trim_trailing_blanks(hunks: list[Hunk], lines: list[str], end: int) -> None:
    """Blank lines between the last hunk and what follows it (the next `@@` or header, at `end`) are separators, not
    empty context lines: read as context, they made a chunk match only where an empty line follows it, in another
    function. A line of one space (` `) is an empty context line as written."""
    if not hunks:
        return
    last = hunks[-1]
    while last.lines and last.lines[-1] == HunkLine(" ", "", last.lines[-1].cr) and _blank_before(lines, end):
        last.lines.pop()
        end -= 1


def _blank_before(lines: list[str], end: int) -> bool:
    return end - 1 >= 0 and lines[end - 1].rstrip("\r") == ""
