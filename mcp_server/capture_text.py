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

from mcp_server.redact_worker import ANSWER_TIMEOUT_S, Pending, RedactWorker
from skills_store.redact import Redactor
from skills_store.truncate import truncate_text

__all__ = ["ANSWER_TIMEOUT_S", "CapturedArgs", "finish_bounded", "redact_bounded", "text_chars", "windows_of"]

#: Strings in captured arguments and summaries are cut to this many characters (head and tail kept).
CAPTURE_TEXT_CHARS = 20_000
#: A secret at most this long that straddles where a stored string is cut is still redacted whole.
REDACT_MARGIN_CHARS = 4_000
#: The most that is redacted of a long string (`capture_text.redact_bounded`): its kept head and tail, each with a
#: margin on its cut side. Redacting costs ~0.1 us a character, so a 180 KB release diff costs ~3 ms, not the 20 ms
#: of the whole diff.
REDACT_WINDOW_CHARS = CAPTURE_TEXT_CHARS + 2 * REDACT_MARGIN_CHARS


class CapturedArgs:
    """A call's arguments on their way into its step. Long ones go to the redaction worker as the call starts (it
    redacts their windows while the tool runs); `stored` gives them redacted and bounded, from the worker's answer
    when it came within `wait_s`, else redacted in this process."""

    def __init__(self, redactor: Redactor, worker: RedactWorker | None, args: dict[str, Any]) -> None:
        self.redactor, self.worker, self.args = redactor, worker, args
        self.pending: Pending | None = None
        self._windows: Any = None
        if worker is not None and text_chars(args) >= worker.min_chars:
            self._windows = windows_of(dict(args), CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)
            self.pending = worker.submit(self._windows, text_chars(self._windows))

    def stored(self, wait_s: float) -> Any:
        if self.pending is not None and self.worker is not None:
            answered, value = self.pending.result(wait_s)
            if answered:
                return finish_bounded(value, CAPTURE_TEXT_CHARS)
            if wait_s > 0:  # not a mere look on the event loop: the worker is hung (or slower than it may be)
                self.worker.abandon(self.pending)
        if self._windows is None:
            self._windows = windows_of(dict(self.args), CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)
        return finish_bounded(self.redactor.redact(self._windows), CAPTURE_TEXT_CHARS)


#: Stands between the two windows of a long string while it is redacted: a NUL never occurs in a rule's match, and
#: the newlines keep line-based rules from reading across it. The number is how many characters it replaces.
_CUT = re.compile("\n\x00([0-9]+)\x00\n")
#: What `truncate_text` leaves for its marker.
_MARKER_ROOM = 60


def redact_bounded(redactor: Redactor, value: Any, limit: int, margin: int) -> Any:
    """`value` redacted (strings, dicts, lists, as `Redactor.redact`), every string cut to `limit` characters.

    A string longer than `limit` is redacted only within its kept head and tail, each widened by `margin`."""
    return finish_bounded(redactor.redact(windows_of(value, limit, margin)), limit)


def windows_of(value: Any, limit: int, margin: int) -> Any:
    """What `redact_bounded` redacts of `value`: each long string as its kept head and tail with their margins,
    joined by a cut marker. `finish_bounded(redactor.redact(windows_of(v, l, m)), l) == redact_bounded(r, v, l, m)`,
    so the redaction in between may run anywhere (`mcp_server.redact_worker`)."""
    head, tail = _kept(limit)
    return _windows(value, limit, head + margin, tail + margin)


def finish_bounded(redacted: Any, limit: int) -> Any:
    """The redacted windows of `windows_of` as they are stored: heads and tails cut to size, the marker counted."""
    head, tail = _kept(limit)
    return _finish(redacted, limit, head, tail)


def text_chars(value: Any) -> int:
    """How many characters of text `value` holds (its strings, nested in dicts and lists)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(text_chars(item) for item in value.values())
    if isinstance(value, list | tuple):
        return sum(text_chars(item) for item in value)
    return 0


def _kept(limit: int) -> tuple[int, int]:
    keep = limit - _MARKER_ROOM
    return keep * 2 // 3, keep // 3


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
