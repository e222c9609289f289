"""What a captured step keeps of a long text: its redacted head and tail, and how much of it was left out.

A tool call's arguments can be huge (a release diff is 200 KB, `apply_patch` accepts 10 MB). Redacting all of it
would cost ~0.1 us a character on the response path, so only what is kept is redacted, plus a margin on the cut
side of each kept part: a secret up to `margin` characters long that straddles a cut is still seen whole. The
stored string is the head (2/3) and the tail (1/3) around the marker of `skills_store.truncate.truncate_text`,
and the marker counts the characters of the original that are not stored (a secret redacted in a margin counts
as its marker), not those of the window that was redacted.
"""

from __future__ import annotations

import re
from typing import Any

from skills_store.redact import Redactor
from skills_store.truncate import truncate_text

#: Stands between the two windows of a long string while it is redacted: a NUL never occurs in a rule's match, and
#: the newlines keep line-based rules from reading across it. The number is how many characters it replaces.
_CUT = re.compile("\n\x00([0-9]+)\x00\n")
#: What `truncate_text` leaves for its marker.
_MARKER_ROOM = 60


def redact_bounded(redactor: Redactor, value: Any, limit: int, margin: int) -> Any:
    """`value` redacted (strings, dicts, lists, as `Redactor.redact`), every string cut to `limit` characters.

    A string longer than `limit` is redacted only within its kept head and tail, each widened by `margin`."""
    keep = limit - _MARKER_ROOM
    head, tail = keep * 2 // 3, keep // 3
    return _finish(redactor.redact(_windows(value, limit, head + margin, tail + margin)), limit, head, tail)


def _windows(value: Any, limit: int, head: int, tail: int) -> Any:
    if isinstance(value, str):
        if len(value) <= limit or len(value) <= head + tail:
            return value
        return f"{value[:head]}\n\x00{len(value) - head - tail}\x00\n{value[len(value) - tail :]}"
    if isinstance(value, dict):
        return {key: _windows(item, limit, head, tail) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_windows(item, limit, head, tail) for item in value]
    return value


def _finish(value: Any, limit: int, head: int, tail: int) -> Any:
    if isinstance(value, str):
        cut = _CUT.search(value)
        if cut is None:
            return truncate_text(value, limit)
        before, after = value[: cut.start()], value[cut.end() :]
        kept_head, kept_tail = before[:head], after[max(len(after) - tail, 0) :]
        left_out = int(cut.group(1)) + len(before) - len(kept_head) + len(after) - len(kept_tail)
        return f"{kept_head}\n[... {left_out:,} characters truncated ...]\n{kept_tail}"
    if isinstance(value, dict):
        return {key: _finish(item, limit, head, tail) for key, item in value.items()}
    if isinstance(value, list):
        return [_finish(item, limit, head, tail) for item in value]
    return value
