"""Where skillbank's table goes in a TOML file, by lines, so that uninstall gives the layout back.

tomlkit keeps every byte it does not touch, but it files the comments and blank lines above a table header under the
table before it. A table it adds after the last `[mcp_servers.*]` so lands below the comments that lead into the
next table (`# profiles` above `[profiles.x]` ends up above `[mcp_servers.skillbank]`), and the blank line it puts
in front stays behind when the table goes. So tomlkit only says *where* (it adds the table to the parsed file; the
lines before and after it are the file's), and the table is placed here:

- after the table before it with the comments and blank lines that follow it, so behind a blank line (one is added
  where there is none);
- before the comment lines right above the next header, separated from them by the blank lines that were in front
  of them;
- at the end of the file: after everything, behind a blank line.

`remove_table` undoes exactly that: the blank line in front goes, the comments and blank lines that came after the
table stay where it was. When tomlkit's change is not a plain insertion (or removal) of whole lines, its own text is
used as it is.
"""

from __future__ import annotations


def _lines(text: str) -> list[str]:
    if text and not text.endswith("\n"):
        text += "\n"
    return text.splitlines(keepends=True)


def _blank(line: str) -> bool:
    return not line.strip()


def _trivia(line: str) -> bool:
    return _blank(line) or line.lstrip().startswith("#")


def _trailing(lines: list[str]) -> int:
    """How many lines at the end of `lines` are blank or comments."""
    count = 0
    while count < len(lines) and _trivia(lines[-1 - count]):
        count += 1
    return count


def _common(a: list[str], b: list[str]) -> tuple[int, int]:
    """Lines `a` and `b` share at the start, then at the end (not overlapping the start)."""
    n = min(len(a), len(b))
    start = 0
    while start < n and a[start] == b[start]:
        start += 1
    end = 0
    while end < n - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return start, end


def insert_table(old: str, placed: str, table: str) -> str:
    """`old` with `table` (its text, header first) where tomlkit put it in `placed` (`old` with the table added)."""
    nl = "\r\n" if "\r\n" in old else "\n"
    before, new = _lines(old), _lines(placed)
    start, end = _common(before, new)
    if start + end != len(before):
        return placed
    before, after = before[:start], before[start:]
    block = _lines(table.replace("\n", nl) if nl != "\n" else table)
    if not after:
        gap = [nl] if before and not _blank(before[-1]) else []
        return "".join(before + gap + block)
    trivia = before[len(before) - _trailing(before) :]
    core = before[: len(before) - len(trivia)]
    lead = 0  # the comment lines right above the next header: they stay with it
    while lead < len(trivia) and not _blank(trivia[-1 - lead]):
        lead += 1
    head, leading = trivia[: len(trivia) - lead], trivia[len(trivia) - lead :]
    blanks = 0  # the blank lines that separated them from what came before: the table gets the same in front
    while blanks < len(head) and _blank(head[-1 - blanks]):
        blanks += 1
    gap = [nl] if core and not head else []
    return "".join(core + head + gap + block + head[len(head) - blanks :] + leading + after)


def remove_table(old: str, removed: str) -> str:
    """`old` without the table tomlkit took out in `removed`, its blank line in front gone (`insert_table` undone)."""
    lines, new = _lines(old), _lines(removed)
    start, end = _common(lines, new)
    if start + end != len(new) or start == len(lines) - end:
        return removed
    before, block, after = lines[:start], lines[start : len(lines) - end], lines[len(lines) - end :]
    if not block[0].lstrip().startswith("["):
        return removed
    tail = block[len(block) - _trailing(block) :]  # what followed the table: the next header's comments and blanks
    front = before[len(before) - _trailing(before) :]
    if all(_blank(line) for line in front):
        before = before[: len(before) - len(front)]
    elif before and _blank(before[-1]):
        while tail and _blank(tail[0]):
            tail = tail[1:]
    result = before + tail + after
    if not after:
        while result and _blank(result[-1]):
            result.pop()
    return "".join(result)
