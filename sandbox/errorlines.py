"""Recognising error lines (`Type: message`): the one rule the test runner, the distiller and search share.

An error line names an exception type, optionally dotted (`json.decoder.JSONDecodeError`), whose last part
starts with a capital and ends in `Error`, `Exception`, `Warning`, `Exit`, `Interrupt`, `Iteration` or `Failed`
(pytest's `Failed`), or is one of the well-known exceptions named otherwise (`subprocess.TimeoutExpired`,
`ExceptionGroup`, `zipfile.BadZipFile`, ...: `OTHER_EXCEPTIONS`), then `: message` or nothing. pytest's `E   ` prefix
is dropped. `raise KeyError(k)` is code,
not an error line: after the type comes a colon or the end of the line, nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Exceptions of the standard library and of the most used test and HTTP libraries whose names do not end in one of
#: the suffixes (a failure that ends in `subprocess.TimeoutExpired: ...` was otherwise searched as plain words).
OTHER_EXCEPTIONS = (
    "TimeoutExpired", "BaseExceptionGroup", "ExceptionGroup", "RemoteDisconnected", "IncompleteRead",
    "BadZipFile", "BadGzipFile", "ConnectTimeout", "ReadTimeout", "DoesNotExist",
    "MultipleObjectsReturned", "ImproperlyConfigured", "SuspiciousOperation",
)  # fmt: skip
#: The exception type of an error line; group 1 of the patterns below.
ERROR_TYPE = (
    r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Iteration|Failed)"
    rf"|(?:{'|'.join(OTHER_EXCEPTIONS)})\b)"
)
_TAIL = r"(?::[ \t]*(.*?))?\s*$"
_AT_START = re.compile(rf"^(?:E\s+)?({ERROR_TYPE}){_TAIL}")
#: Inside a line, after a space, `(`, `[` or `-` (`FAILED t.py::x - KeyError: 'a'`).
_INSIDE = re.compile(rf"(?:^|[\s(\[-])({ERROR_TYPE}){_TAIL}")
_RAISED = ("Error", "Exception")


@dataclass(frozen=True)
class ErrorLine:
    """One recognised error line."""

    qualified: str
    """The type as written (`json.decoder.JSONDecodeError`)."""
    message: str
    """What follows `Type: ` (may be empty)."""

    @property
    def type(self) -> str:
        """The type without its module (`JSONDecodeError`)."""
        return self.qualified.rsplit(".", 1)[-1]

    @property
    def raised(self) -> bool:
        """An exception that was raised (`...Error`, `...Exception`), not a warning or an exit."""
        return self.type.endswith(_RAISED) or self.type in OTHER_EXCEPTIONS

    @property
    def text(self) -> str:
        """`Type: message` with the short type, or the type alone."""
        return f"{self.type}: {self.message}" if self.message else self.type


def parse_error_line(line: str, *, inside: bool = False) -> ErrorLine | None:
    """The error line `line` is (it must start with the type), or, with `inside`, the one it ends with."""
    text = line.strip()
    match = (_INSIDE.search if inside else _AT_START.match)(text)
    if match is None:
        return None
    return ErrorLine(match.group(1), (match.group(2) or "").strip())


def last_error_line(text: str) -> ErrorLine | None:
    """The last raised exception with a message in `text` (what a crash before any test ran leaves behind)."""
    for line in reversed(text.splitlines()):
        found = parse_error_line(line)
        if found is not None and found.raised and found.message:
            return found
    return None
