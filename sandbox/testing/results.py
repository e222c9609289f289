"""Reading pytest's results: the junit XML report first, the terminal's short summary (`-r`) as the fallback.

The junit report (family `xunit1`, so that each case carries its file) gives outcomes, durations and messages.
Its (classname, name) pairs are mapped back to exact node ids with the short summary lines (`PASSED id`, `FAILED id
- message`, `XPASS id`...), which also tell an xpass from a pass (junit writes both as a plain case).
"""

from __future__ import annotations

import os
import re
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

from pydantic import BaseModel, Field

from sandbox.testing.models import Outcome, TestCase

#: The pytest options that make the reports parsed here (added to the default command).
PYTEST_REPORT_ARGS = ("-rfEsxXp", "-o", "junit_family=xunit1")
_SUMMARY_RE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S.*?)(?: - (.*))?$")
_SUMMARY_OUTCOME: dict[str, Outcome] = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "XFAIL": "xfailed",
    "XPASS": "xpassed",
}
_TOTALS_RE = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b")
_CRASH_LINE_RE = re.compile(r"^\S.*:\d+: (\w[\w.]*)$")
_PHASE_RE = re.compile(r'^failed on (?:setup|teardown|call) with "(.*)"$')
_COLLECTION_PREFIX = "collection failed: "
#: Largest junit report that is parsed (a suite of 100,000 tests writes about 20 MiB).
MAX_REPORT_BYTES = 64 * 1024 * 1024


class ParsedReport(BaseModel):
    """Tests found in a report, and whether the report itself could be read."""

    tests: list[TestCase] = Field(default_factory=list)
    found: bool = False
    """A report was there and could be read (a junit file, or a short summary in the output)."""
    collection_errors: int = 0
    skipped_without_id: int = 0
    """Skips the short summary counts without naming the test (`SKIPPED [2] path:line: reason`)."""
    problem: str | None = None
    """Why a report that exists was not read (too big, not a regular file, not XML)."""


def parse_junit(path: Path, message_chars: int = 1500, max_bytes: int = MAX_REPORT_BYTES) -> ParsedReport:
    """Parse a pytest junit XML file; a missing, oversized or unreadable one gives `found=False`.

    The file was written by the code under test, so it is opened without following symlinks, must be a regular
    file, and is not parsed when larger than `max_bytes`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return ParsedReport()
    except OSError as exc:
        return ParsedReport(problem=f"the junit report could not be opened ({exc.strerror})")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return ParsedReport(problem="the junit report is not a regular file")
        if info.st_size > max_bytes:
            return ParsedReport(problem=f"the junit report is {info.st_size} bytes, over the {max_bytes} limit")
        try:
            root = ET.parse(handle).getroot()
        except ET.ParseError as exc:
            return ParsedReport(problem=f"the junit report is not valid XML ({exc})")
    report = ParsedReport(found=True)
    for case in root.iter("testcase"):
        file = case.get("file") or ""
        classname, name = case.get("classname") or "", case.get("name") or ""
        node_id = junit_node_id(file, classname, name)
        outcome: Outcome = "passed"
        message: str | None = None
        for child in case:
            text = (child.text or "").strip()
            if child.tag == "failure" and outcome != "error":
                outcome, message = "failed", _message(child.get("message") or "", text, message_chars)
            elif child.tag == "error":
                outcome, message = "error", _message(child.get("message") or "", text, message_chars)
                if (child.get("message") or "") == "collection failure":
                    report.collection_errors += 1
            elif child.tag == "skipped" and outcome == "passed":
                xfail = child.get("type") == "pytest.xfail"
                outcome = "xfailed" if xfail else "skipped"
                message = _trim(child.get("message") or text, message_chars) or None
        report.tests.append(TestCase(id=node_id, outcome=outcome, duration_s=_float(case.get("time")), message=message))
    return report


def parse_summary(output: str, message_chars: int = 1500) -> ParsedReport:
    """Parse the short test summary (`-r` lines) of pytest's terminal output."""
    report = ParsedReport()
    for line in output.splitlines():
        match = _SUMMARY_RE.match(line.rstrip())
        if match:
            label, node_id, message = match.groups()
            report.found = True
            text = _trim(message or "", message_chars) or None
            report.tests.append(TestCase(id=node_id, outcome=_SUMMARY_OUTCOME[label], message=text))
            if label == "ERROR" and "::" not in node_id:
                report.collection_errors += 1
        elif line.startswith("SKIPPED ["):
            report.found = True
            count = re.match(r"SKIPPED \[(\d+)\]", line)
            report.skipped_without_id += int(count.group(1)) if count else 1
    return report


def merge_reports(junit: ParsedReport, summary: ParsedReport) -> ParsedReport:
    """The junit tests, with exact node ids and xpasses from the summary; the summary alone when junit is missing."""
    if not junit.found:
        return summary
    by_address = {mangle(t.id): t for t in summary.tests}
    merged: list[TestCase] = []
    for case in junit.tests:
        known = by_address.get(mangle(case.id))
        if known is not None:
            outcome = "xpassed" if known.outcome == "xpassed" and case.outcome == "passed" else case.outcome
            case = case.model_copy(update={"id": known.id, "outcome": outcome})
        merged.append(case)
    return junit.model_copy(update={"tests": merged})


def junit_node_id(file: str, classname: str, name: str) -> str:
    """The node id behind a junit case (the inverse of `mangle`), using the case's `file` attribute."""
    if not classname:
        return file or name.replace(".", "/") + ".py"
    module = file[:-3].replace("/", ".") if file.endswith(".py") else ""
    if module and classname == module:
        return f"{file}::{name}"
    if module and classname.startswith(module + "."):
        classes = classname[len(module) + 1 :].split(".")
        return "::".join([file, *classes, name])
    if file:
        return f"{file}::{name}"
    return classname.replace(".", "/") + f".py::{name}"


def mangle(node_id: str) -> tuple[str, str]:
    """pytest's junit (classname, name) for a node id."""
    path, bracket, params = node_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def summary_totals(output: str) -> dict[str, int]:
    """The counts on pytest's final line (`== 3 failed, 10 passed in 1.2s ==`), keyed like the result fields."""
    for line in reversed(output.splitlines()):
        if " in " in line and ("passed" in line or "failed" in line or "error" in line or "skipped" in line):
            found = {key.rstrip("s") if key.startswith("error") else key: int(n) for n, key in _TOTALS_RE.findall(line)}
            if found:
                return {("errors" if k == "error" else k): v for k, v in found.items()}
    return {}


def exception_line(case: TestCase) -> str | None:
    """`ExceptionType: message` for a failed or errored test, from its trimmed message."""
    lines = [line.strip() for line in (case.message or "").splitlines() if line.strip()]
    if not lines:
        return None
    head = lines[0].removeprefix(_COLLECTION_PREFIX)
    wrapped = _PHASE_RE.match(head)
    if wrapped:
        head = wrapped.group(1)
    crash = next((m.group(1) for line in reversed(lines) if (m := _CRASH_LINE_RE.match(line))), None)
    if crash:
        short = crash.rsplit(".", 1)[-1]
        if not head.startswith((short, crash)):
            head = f"{short}: {head}"
    return head[:300]


def _message(message: str, text: str, limit: int) -> str:
    """The crash line, then as much of the end of the traceback as fits in `limit`."""
    head = message.strip()
    if head in ("collection failure", ""):
        errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
        detail = errors[-1] if errors else (text.strip().splitlines() or ["unknown error"])[-1]
        head = f"{_COLLECTION_PREFIX}{detail}" if message.strip() == "collection failure" else detail
    if not text or text == head:
        return _trim(head, limit)
    room = limit - len(head) - 1
    if room < 40:
        return _trim(head, limit)
    tail = text if len(text) <= room else "..." + text[len(text) - room + 3 :]
    return f"{head}\n{tail}"


def _trim(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _float(value: str | None) -> float:
    try:
        return round(float(value or 0.0), 4)
    except ValueError:
        return 0.0
