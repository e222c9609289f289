"""The line of a failed test's message that says what went wrong (`ExceptionType: message`): what the distiller
names a failure by, and (with pytest's own hint for a fixture error, `search_line`) what `run_tests` searches the
skill store with."""

from __future__ import annotations

import re

from sandbox.testing.models import TestCase

_CRASH_LINE_RE = re.compile(r"^\S.*:\d+: (\w[\w.]*)$")
#: pytest's wrapper around the message of an error outside the test's call (the closing quote on the first line,
#: or further down when the message goes on: a fixture error's `file path, line N`).
PHASE_RE = re.compile(r'^failed on (?:setup|teardown|call) with "(.*)"$')
_PHASE_OPEN_RE = re.compile(r'^failed on (?:setup|teardown|call) with "(.*)$')
_FILE_LINE_RE = re.compile(r"^file .+, line \d+$")
#: A traceback's exception line: `KeyError: 'k'`, `pkg.errors.BadThing: ...`, `StopIteration`.
_EXCEPTION_RE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Iteration|Warning)\b(?::.*)?$")
COLLECTION_PREFIX = "collection failed: "


def exception_line(case: TestCase) -> str | None:
    """`ExceptionType: message` for a failed or errored test, from its trimmed message."""
    lines = [line.strip() for line in (case.message or "").splitlines() if line.strip()]
    if not lines:
        return None
    head = lines[0].removeprefix(COLLECTION_PREFIX)
    wrapped = PHASE_RE.match(head) or _PHASE_OPEN_RE.match(head)
    if wrapped:
        head = wrapped.group(1)
    crash = next((m.group(1) for line in reversed(lines) if (m := _CRASH_LINE_RE.match(line))), None)
    told = _told_inside(head, lines, crash)
    if told is not None:
        return told[:300]
    if crash:
        short = crash.rsplit(".", 1)[-1]
        named = head.split(":", 1)[0]  # pytest qualifies a class of the test's own module: `test_m.MyError: ...`
        if not (head.startswith((short, crash)) or named.endswith(f".{short}")):
            head = f"{short}: {head}"
    return head[:300]


#: A line of pytest's hint after a fixture error's `E` line, `>       available fixtures: ...`, is cut to this.
HINT_CHARS = 100


def search_line(case: TestCase) -> str | None:
    """`exception_line`, and for a fixture error (`fixture 'x' not found`) the lines pytest adds under it (`>`
    lines: the fixtures there are, cut to `HINT_CHARS`, and `use 'pytest --fixtures [testpath]'`): the bare `E` line
    says too little for a search to know what it is about."""
    line = exception_line(case)
    if line is None:
        return None
    lines = [line.strip() for line in (case.message or "").splitlines() if line.strip()]
    hint = _fixture_hint(lines)
    return f"{line} {hint}" if hint else line


def _fixture_hint(lines: list[str]) -> str:
    """The `>` lines under a fixture error's `E` line (the fullest run of them: the junit message may hold the
    report twice, cut the first time), each cut at a comma within `HINT_CHARS`."""
    head = lines[0].removeprefix(COLLECTION_PREFIX) if lines else ""
    wrapped = PHASE_RE.match(head) or _PHASE_OPEN_RE.match(head)
    if not _FILE_LINE_RE.match(wrapped.group(1) if wrapped else head):
        return ""
    best: list[str] = []
    for index, line in enumerate(lines):
        if not line.startswith("E "):
            continue
        run = []
        for after in lines[index + 1 :]:
            if not after.startswith(">"):
                break
            run.append(_cut(" ".join(after.split())))
        if len(run) > len(best):
            best = run
    return " ".join(best)


def _cut(line: str) -> str:
    if len(line) <= HINT_CHARS:
        return line
    comma = line.rfind(",", 0, HINT_CHARS)
    return (line[:comma] if comma > 0 else line[:HINT_CHARS]) + ", ..."


def _told_inside(head: str, lines: list[str], crash: str | None) -> str | None:
    """The line that says what went wrong when the message's first line does not: a fixture error's `E` line
    (its head is `file path, line N`), a doctest's exception or its expected and actual output (its head is the
    example's number)."""
    if _FILE_LINE_RE.match(head):
        error = next((line[1:].strip() for line in lines if line.startswith("E ")), None)
        if error:
            return error
    if crash == "UnexpectedException":
        raised = [line for line in lines if _EXCEPTION_RE.match(line) and not line.startswith("UNEXPECTED")]
        if raised:
            return raised[-1]
    if crash == "DocTestFailure":
        source = next((line for line in lines if ">>>" in line), "")
        source = source[source.index(">>>") :] if source else ""
        expected = _after(lines, "Expected:")
        got = _after(lines, "Got:") or ("nothing" if any(line == "Got nothing" for line in lines) else "")
        return f"DocTestFailure: {source} expected {expected} got {got}".replace("  ", " ")
    return None


def _after(lines: list[str], label: str) -> str:
    """The (stripped) line after the one that is `label`."""
    for index, line in enumerate(lines[:-1]):
        if line == label:
            return lines[index + 1]
    return ""
