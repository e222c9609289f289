"""Turn patch text into file sections: size limit, wrappers (code fences, heredoc), format detection."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sandbox.patch.models import MAX_PATCH_BYTES
from sandbox.patch.ops import FilePatch, MalformedPatch
from sandbox.patch.parse_codex import BEGIN, END, parse_codex
from sandbox.patch.parse_unified import iter_unified

#: The heredoc wrapper models put around an envelope: `apply_patch <<'EOF'`, or the bare `<<'EOF'` line a model sends
#: as the argument of an `apply_patch` command it runs without a shell.
_HEREDOC_RE = re.compile(r"""^\s*(?:(?:apply_patch|applypatch)\s*)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1\s*$""")
_NO_CHANGES = (
    "send a unified diff (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks) "
    f"or a Codex envelope (`{BEGIN}` ... `{END}`)"
)


def parse_patch(text: str) -> list[FilePatch]:
    """Parse a unified diff or a Codex envelope; raise `MalformedPatch` (a `PatchError`) saying what to change."""
    return list(iter_patch(text))


def iter_patch(text: str) -> Iterator[FilePatch]:
    """`parse_patch` section by section (a unified diff's next section is parsed after this one is used); the
    errors are the same, raised when the parse reaches them."""
    # A character is at most 4 bytes of UTF-8: a patch of fewer than a quarter of the limit needs no encoding.
    if len(text) > MAX_PATCH_BYTES // 4 and len(text.encode("utf-8", "surrogatepass")) > MAX_PATCH_BYTES:
        raise MalformedPatch(
            None,
            f"the patch is larger than {MAX_PATCH_BYTES // (1024 * 1024)} MB",
            "split it into several smaller patches",
        )
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise MalformedPatch(line, "the patch contains a NUL byte", "patches must be text; leave binary files out")
    first_break = text.find("\n")  # the usual patch's search stops at its first line
    if first_break in (-1, len(text) - 1) and "\\n" in text:
        raise MalformedPatch(
            1,
            "the patch is one line with literal `\\n` sequences where its line breaks should be (its text was "
            "escaped twice)",
            "send the patch with real line breaks: in the tool call's JSON each line break is written `\\n` once, "
            "not `\\\\n`",
        )
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = _dedent_envelope(_strip_fence(lines))
    begin = _codex_begin(lines)
    if begin is not None:
        _unpad_end(lines, begin)
        sections, end = parse_codex(lines, begin)
        _check_after_end(lines, begin, end)
        if not sections:
            raise MalformedPatch(None, "the patch contains no file changes", _NO_CHANGES)
        return iter(sections)
    # an envelope's marker starts its line: a diff's context line ` *** Begin Patch` (a file about the format) is not
    if BEGIN in text and any(line.rstrip() == BEGIN for line in lines):
        raise MalformedPatch(
            None,
            f"there is text before `{BEGIN}`",
            f"send only the envelope, from `{BEGIN}` to `{END}` (an `apply_patch <<'EOF'` wrapper is fine)",
        )
    return _some(iter_unified(lines, has_cr="\r" in text))


def _some(sections: Iterator[FilePatch]) -> Iterator[FilePatch]:
    """The sections, then the complaint about a patch without any."""
    found = False
    for section in sections:
        found = True
        yield section
    if not found:
        raise MalformedPatch(None, "the patch contains no file changes", _NO_CHANGES)


def _strip_fence(lines: list[str]) -> list[str]:
    """Drop a Markdown code fence around the whole patch (```diff ... ```)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), None)
    if first is None or last is None or first == last:
        return lines
    if lines[first].strip().startswith("```") and lines[last].strip() == "```":
        return lines[first + 1 : last]
    return lines


def _dedent_envelope(lines: list[str]) -> list[str]:
    """A Codex envelope indented as a whole (pasted from a Markdown list item or a quote) without that indentation:
    every line that is not blank must begin with the indentation of its `*** Begin Patch` line, else it is refused
    saying that `*** Begin Patch` starts its line. A `*** Begin Patch` padded alone (the section header after it
    indented less) is only trimmed."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first].strip() != BEGIN or lines[first].rstrip() == BEGIN:
        return lines
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    body = next((i for i in range(first + 1, len(lines)) if lines[i].strip()), None)
    if body is not None and not lines[body].startswith(indent) and lines[body].lstrip().startswith("*** "):
        # Only the marker is padded (its first section's header is not indented as it is): read the rest as written,
        # as Codex does, which trims its markers and headers.
        return [*lines[:first], BEGIN, *lines[first + 1 :]]
    stray = next((i for i in range(first, len(lines)) if lines[i].strip() and not lines[i].startswith(indent)), None)
    if stray is not None:
        raise MalformedPatch(
            stray + 1,
            f"the envelope is indented ({len(indent)} character(s) before `{BEGIN}`), and this line is indented less",
            f"start `{BEGIN}`, `{END}` and every line between them at the beginning of the line, not indented",
        )
    return [line[len(indent) :] if line.startswith(indent) else "" for line in lines]


def _codex_begin(lines: list[str]) -> int | None:
    """The index of `*** Begin Patch` when the patch is a Codex envelope, optionally in a heredoc wrapper."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None
    if lines[first].rstrip() == BEGIN:
        return first
    if _HEREDOC_RE.match(lines[first]):
        nxt = next((i for i in range(first + 1, len(lines)) if lines[i].strip()), None)
        if nxt is not None and lines[nxt].strip() == BEGIN:
            return nxt
    return None


def _unpad_end(lines: list[str], begin: int) -> None:
    """Trim the whitespace around an `*** End Patch` that is the envelope's last line (before a heredoc's closing
    delimiter), as Codex does: read as written, ` *** End Patch` was a context line and the patch had no end."""
    last = next((i for i in range(len(lines) - 1, begin, -1) if lines[i].strip()), None)
    if last is None:
        return
    match = _wrapper(lines, begin)
    if match is not None and lines[last].strip() == match.group(2):
        last = next((i for i in range(last - 1, begin, -1) if lines[i].strip()), None)
        if last is None:
            return
    if lines[last].strip() == END:
        lines[last] = END


def _wrapper(lines: list[str], begin: int) -> re.Match[str] | None:
    """The heredoc line before the envelope's `*** Begin Patch`, if there is one."""
    wrapper = next((line for line in lines[:begin] if line.strip()), None)
    return _HEREDOC_RE.match(wrapper) if wrapper is not None else None


def _check_after_end(lines: list[str], begin: int, end: int) -> None:
    """After `*** End Patch` (`lines[end]`) only the heredoc's closing delimiter (or blank lines) may follow."""
    match = _wrapper(lines, begin)
    delimiter = match.group(2) if match else None
    for i in range(end + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped:
            continue
        if delimiter is not None and stripped == delimiter:
            delimiter = None
            continue
        raise MalformedPatch(i + 1, f"unexpected text after `{END}`: {stripped[:80]!r}", "end the patch there")
