"""Error signatures: an exception type and its message with the specifics (names, paths, numbers) abstracted.

Two failures with the same signature are the same kind of problem in different code, so the signature is the
`pattern` of a distilled skill and the key that groups episodes:

    NameError: name 'itemz' is not defined                 -> NameError: name '<name>' is not defined
    FileNotFoundError: [Errno 2] No such file: '/tmp/x.csv' -> FileNotFoundError: [Errno <n>] No such file: '<path>'
    assert 3 == 4                                          -> AssertionError: assert <n> == <n>

The abstraction keeps what identifies the failure and drops what says where it happened: the exception type, the
message template, and the names that are not the user's own (library modules, their attributes, builtins and
their methods, decided by `names.Names`) stay; the user's identifiers, paths, numbers and literals become
placeholders. `collections.abc` names are grouped as `<ABC>`:

    module 'collections' has no attribute 'Mapping'  -> module 'collections' has no attribute '<ABC>'
    'dict' object has no attribute 'iteritems'       -> (unchanged)
    'Cart' object has no attribute 'totl'            -> '<name>' object has no attribute '<name>'
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from sandbox.errorlines import last_error_line, parse_error_line
from sandbox.testing.failure_lines import exception_line
from sandbox.testing.models import TestCase
from skills_store.distill.names import ABC_NAMES, Names

#: Longest message kept in a signature (after abstraction); longer ones are cut at a word boundary.
MAX_SIGNATURE_CHARS = 240

_ASSERT_RE = re.compile(r"^(?:E\s+)?assert\b")
#: pytest's line for a test that asks for a fixture nobody defines (`fixture 'db' not found`).
_FIXTURE_RE = re.compile(r"^fixture '[^'\s]+' not found\b")
_CRASH_AT_RE = re.compile(r"^(\S+?\.[A-Za-z0-9]+):(\d+): \w[\w.]*$")
_PYTEST_SUMMARY_RE = re.compile(r"^(?:FAILED|ERROR) (\S+)(?: - (.*))?$")

# Order matters: the specific shapes first, then quoted strings, then bare paths and numbers.
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"<([A-Za-z_][\w.]*) object at 0x[0-9a-fA-F]+>"), r"<\1 object>"),
    (re.compile(r"<(function|bound method|coroutine object|generator object) [\w.<>]+ at 0x[0-9a-fA-F]+>"), r"<\1>"),
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


#: Message templates whose quoted (or called) names have a known role; see `_slot`.
_TEMPLATES: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"module '([\w.]+)' has no attribute '(\w+)'"), ("module", "attr")),
    (re.compile(r"type object '([\w.]+)' has no attribute '(\w+)'"), ("type", "attr")),
    (re.compile(r"'([\w.]+)' object has no attribute '(\w+)'"), ("type", "attr")),
    (re.compile(r"cannot import name '(\w+)' from '([\w.]+)'"), ("attr-of-next", "module")),
    (re.compile(r"No module named '([\w.]+)'"), ("module",)),
    (re.compile(r"name '(\w+)' is not defined"), ("name",)),
    (re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(\) (?:got an unexpected keyword argument '(\w+)'|got multiple|takes|"
                r"missing)"), ("call", "attr")),
    (re.compile(r"'([\w.]+)' object is not (?:callable|subscriptable|iterable|an iterator)"), ("type",)),
    (re.compile(r"passed to ([A-Za-z_][\w.]*): (\w+)"), ("call", "attr")),
]  # fmt: skip
_QUOTED_NAME_RE = re.compile(r"(['\"])([A-Za-z_][\w.]*)\1")
_KEEP = "\x00K{}\x01"
_KEPT_RE = re.compile("\x00K(\\d+)\x01")


def _slot(kind: str, value: str, owner_kept: bool | None, owner: str, names: Names) -> str | None:
    """What a name in a template slot becomes: itself (kept), `<ABC>`, or None (the user's: a placeholder)."""
    if kind == "module":
        return value if names.is_module(value) else None
    if kind == "type":
        return value if names.is_known_type(value) else None
    if kind == "name":
        return value if names.is_known(value) else None
    if kind == "call":
        root = value.split(".", 1)[0]
        return None if names.is_user(root) or names.is_user(value.rsplit(".", 1)[-1]) else value
    if not owner_kept:
        return None
    if value in ABC_NAMES and owner.split(".", 1)[0] == "collections":
        return "<ABC>"
    return value


def _protect(text: str, names: Names, kept: list[str], *, literal: bool = False) -> str:
    """Replace the names that stay with sentinels (so the generic rules leave them) and the user's with `<name>`."""

    def keep(value: str) -> str:
        kept.append(value)
        return _KEEP.format(len(kept) - 1)

    for pattern, kinds in _TEMPLATES:

        def sub(match: re.Match[str], kinds: tuple[str, ...] = kinds) -> str:
            values = list(match.groups())
            order = range(len(kinds) - 1, -1, -1) if kinds[0] == "attr-of-next" else range(len(kinds))
            decided: dict[int, str | None] = {}
            for i in order:
                if values[i] is None:
                    continue
                kind = "attr" if kinds[i] == "attr-of-next" else kinds[i]
                owner_index = i + 1 if kinds[i] == "attr-of-next" else i - 1
                owner = values[owner_index] if 0 <= owner_index < len(values) and values[owner_index] else ""
                decided[i] = _slot(kind, values[i], decided.get(owner_index) is not None, owner or "", names)
            text, out, pos = match.string, [], match.start()
            for i, value in enumerate(values):
                if value is None:
                    continue
                start, end = match.span(i + 1)
                quote = ""
                if start > match.start() and text[start - 1] in "'\"" and text[end : end + 1] == text[start - 1]:
                    quote, start, end = text[start - 1], start - 1, end + 1
                out.append(text[pos:start])
                result = decided.get(i)
                out.append(keep(quote + (result if result is not None else "<name>") + quote))
                pos = end
            out.append(text[pos : match.end()])
            return "".join(out)

        text = pattern.sub(sub, text)

    def quoted(match: re.Match[str]) -> str:
        value = match.group(2)
        if names.is_known(value) or names.is_known_type(value):
            return keep(match.group(0))
        return match.group(0)

    return text if literal else _QUOTED_NAME_RE.sub(quoted, text)


def abstract_message(message: str, names: Names | None = None, *, literal: bool = False) -> str:
    """The message with the user's names, paths, numbers and addresses replaced by placeholders (module doc).

    `names` says which names are the user's own; without it only the standard library and builtins are known.
    With `literal` (a `KeyError`, whose message is the missing key) no quoted value is kept outside a template.
    """
    text = " ".join(message.split())
    kept: list[str] = []
    text = _protect(text, names or Names(), kept, literal=literal)
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    text = _KEPT_RE.sub(lambda m: kept[int(m.group(1))], text)
    if len(text) > MAX_SIGNATURE_CHARS:
        cut = text.rfind(" ", 0, MAX_SIGNATURE_CHARS)
        text = text[: cut if cut > MAX_SIGNATURE_CHARS // 2 else MAX_SIGNATURE_CHARS] + " ..."
    return text


_LITERAL_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_ABS_PATH_RE = re.compile(
    r"(?<![\w<>.:/~-])(?:/[\w.@+-]+){2,}/?|(?<![\w/])~(?:/[\w.@+-]+)+/?|\b[A-Za-z]:\\(?:[\w.@+-]+\\?)+"
)


def recognisable(sig: ErrorSignature) -> bool:
    """Whether the pattern's message keeps a literal word to recognise the failure by.

    `AssertionError: assert <n> == <n>` or `KeyError: '<name>'` keep none (placeholders, operators and the `assert`
    keyword only): such a pattern fits every failure of its type, so a case note behind it, one session's diff,
    would be suggested for all of them. `assert None == [...]` keeps `None`; `division by zero` keeps its words.
    """
    text = re.sub(r"<[^<>\s]+>", " ", sig.message)
    return any(
        w in ("None", "True", "False") or not (keyword.iskeyword(w) or keyword.issoftkeyword(w))
        for w in _LITERAL_WORD_RE.findall(text)
    )


def without_paths(text: str, workspace: str | None) -> str:
    """`text` with the workspace's own paths made relative and any other absolute path as `<path>`, as in a
    pattern: a skill quotes error lines and code, but where one user keeps their files is not part of the lesson."""
    if workspace and len(workspace.rstrip("/")) > 1:
        root = workspace.rstrip("/")
        text = text.replace(root + "/", "")
        text = re.sub(rf"{re.escape(root)}(?![\w.-])", ".", text)
    return _ABS_PATH_RE.sub("<path>", text)


def specific(sig: ErrorSignature, names: Names) -> ErrorSignature:
    """`sig` abstracted again from its example line, now knowing the user's own names."""
    again = from_error_line(sig.example, sig.location, names)
    return again if again is not None else sig


def error_type(text: str) -> str | None:
    """The exception type a pattern or error line starts with (`NameError`), else None."""
    found = parse_error_line(text)
    return found.type if found else None


def from_error_line(line: str, location: str | None = None, names: Names | None = None) -> ErrorSignature | None:
    """The signature of one `Type: message` line (or a bare `assert ...`); None when it is not an error line."""
    line = re.sub(r"^E\s+", "", " ".join(line.strip().split()))
    if not line:
        return None
    if _ASSERT_RE.match(line):
        line = "AssertionError: " + line
    elif _FIXTURE_RE.match(line):  # pytest prints its FixtureLookupError as the bare message
        line = "FixtureLookupError: " + line
    found = parse_error_line(line)
    if found is None:
        return None
    message = abstract_message(found.message, names, literal=found.type == "KeyError")
    return ErrorSignature(found.type, message, line[:500], location)


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
