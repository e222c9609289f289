"""Error signatures: an exception type and its message with the specifics (names, paths, numbers) abstracted.

Two failures with the same signature are the same kind of problem in different code, so the signature is the
`pattern` of a distilled skill and the key that groups episodes:

    NameError: name 'itemz' is not defined                 -> NameError: name '<name>' is not defined
    FileNotFoundError: [Errno 2] No such file: '/tmp/x.csv' -> FileNotFoundError: [Errno <n>] No such file: '<path>'
    assert 3 == 4                                          -> AssertionError: assert <n> == <n>

The abstraction is deliberately coarse: it keeps the words that say what went wrong and drops what says where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.errorlines import last_error_line, parse_error_line
from sandbox.testing.models import TestCase
from sandbox.testing.results import exception_line

#: Longest message kept in a signature (after abstraction); longer ones are cut at a word boundary.
MAX_SIGNATURE_CHARS = 240

_ASSERT_RE = re.compile(r"^(?:E\s+)?assert\b")
_CRASH_AT_RE = re.compile(r"^(\S+?\.[A-Za-z0-9]+):(\d+): \w[\w.]*$")
_PYTEST_SUMMARY_RE = re.compile(r"^(?:FAILED|ERROR) (\S+)(?: - (.*))?$")

# Order matters: the specific shapes first, then quoted strings, then bare paths and numbers.
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"<([A-Za-z_][\w.]*) object at 0x[0-9a-fA-F]+>"), r"<\1 object>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ][\d:.]+(?:[+-]\d{2}:?\d{2}|Z)?"), "<datetime>"),
    (re.compile(r"(['\"])(?:/|[A-Za-z]:\\|\.{1,2}/|~/)[^'\"]*\1"), r"\1<path>\1"),
    (re.compile(r"(['\"])[^'\"\s/]+\.(?:py|js|ts|json|ya?ml|toml|txt|csv|cfg|ini|md|go|rs)\1"), r"\1<path>\1"),
    (re.compile(r"'(?!<\w+>')[^'\n]{1,200}'"), "'<name>'"),
    (re.compile(r'"(?!<\w+>")[^"\n]{1,200}"'), '"<name>"'),
    (re.compile(r"(?<![\w<])(?:/[\w.@+-]+){2,}/?"), "<path>"),
    (re.compile(r"\b[\w.-]+\.py\b"), "<path>"),
    (re.compile(r"(?<![\w<])-?\d+(?:\.\d+)?(?:e-?\d+)?\b"), "<n>"),
]


@dataclass(frozen=True)
class ErrorSignature:
    """An error reduced to its kind: `exc_type` (e.g. `NameError`) and the abstracted `message`."""

    exc_type: str
    message: str
    example: str
    """The error line as it was seen (unabstracted), for evidence."""
    location: str | None = None
    """`path:line` where the error was raised, when the failure message says so."""

    @property
    def text(self) -> str:
        return f"{self.exc_type}: {self.message}" if self.message else self.exc_type


def abstract_message(message: str) -> str:
    """The message with names, paths, numbers and addresses replaced by placeholders."""
    text = " ".join(message.split())
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    if len(text) > MAX_SIGNATURE_CHARS:
        cut = text.rfind(" ", 0, MAX_SIGNATURE_CHARS)
        text = text[: cut if cut > MAX_SIGNATURE_CHARS // 2 else MAX_SIGNATURE_CHARS] + " ..."
    return text


def error_type(text: str) -> str | None:
    """The exception type a pattern or error line starts with (`NameError`), else None."""
    found = parse_error_line(text)
    return found.type if found else None


def from_error_line(line: str, location: str | None = None) -> ErrorSignature | None:
    """The signature of one `Type: message` line (or a bare `assert ...`); None when it is not an error line."""
    line = re.sub(r"^E\s+", "", " ".join(line.strip().split()))
    if not line:
        return None
    if _ASSERT_RE.match(line):
        line = "AssertionError: " + line
    found = parse_error_line(line)
    if found is None:
        return None
    return ErrorSignature(found.type, abstract_message(found.message), line[:500], location)


def from_failure(test_id: str, message: str | None) -> ErrorSignature | None:
    """The signature of a failed test from the `run_tests` failure message (crash line, then traceback tail)."""
    if not message:
        return None
    head = exception_line(TestCase(id=test_id, outcome="failed", message=message))
    location = None
    for line in reversed(message.splitlines()):
        found = _CRASH_AT_RE.match(line.strip())
        if found:
            location = f"{found.group(1)}:{found.group(2)}"
            break
    return from_error_line(head or "", location)


def from_output(text: str) -> list[tuple[str, ErrorSignature]]:
    """(test id or '', signature) pairs found in a test runner's output: pytest's short summary lines first,
    else the last `Type: message` line (a crash before any test ran)."""
    found: list[tuple[str, ErrorSignature]] = []
    lines = text.splitlines()
    for line in lines:
        summary = _PYTEST_SUMMARY_RE.match(line.strip())
        if summary and summary.group(2):
            sig = from_error_line(summary.group(2))
            if sig is not None:
                found.append((summary.group(1), sig))
    if found:
        return found
    last = last_error_line(text)
    sig = from_error_line(f"{last.qualified}: {last.message}") if last else None
    return [("", sig)] if sig else []
