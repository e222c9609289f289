"""Reading pytest's results: the junit XML report first, the terminal's short summary (`-r`) as the fallback.

The junit report (family `xunit1`) gives outcomes, durations and messages. Its (classname, name) pairs are mapped
back to node ids (the module from `classname`, which names the collecting module, not from `file`, which names where
an inherited or imported test is defined), then to exact ones with the short summary lines (`PASSED id`, `FAILED id
- message`, `XPASS id`...), which also tell an xpass from a pass (junit writes both as a plain case).

pytest reports a test more than once when its teardown fails after its own outcome (junit writes a second case, or an
`<error>` in the case of a passing test; the summary a second line). Each test is listed once, with the worst of its
outcomes and the teardown error noted in its message; `ParsedReport.outcomes` keeps every outcome, so that the counts
can be pytest's own (the test's outcome, plus one `error` per failed teardown).
"""

from __future__ import annotations

import ast
import os
import re
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

from pydantic import BaseModel, Field

from sandbox.testing.failure_lines import COLLECTION_PREFIX, PHASE_RE
from sandbox.testing.models import OUTCOME_ORDER, Outcome, TestCase
from sandbox.untrusted import OPEN_FLAGS

#: The pytest options that make the reports parsed here (added to the default command). `--rootdir=.` (the
#: workspace, the run's cwd) makes junit's ids relative to the workspace, as the summary's (cwd-relative) ids are,
#: when a config file in a subdirectory (`tests/pytest.ini`) would make pytest's rootdir that subdirectory.
#: `--junit-prefix=` undoes a prefix set in the project's addopts, which junit would put before every id.
#: `junit_logging=no` and `junit_log_passing_tests=false` keep the tests' captured output out of the report (a CI
#: config's `junit_logging = all` made it as large as the output, past `MAX_JUNIT_BYTES`, and the run an error).
_JUNIT_OPTIONS = ("-o", "junit_family=xunit1", "-o", "junit_logging=no", "-o", "junit_log_passing_tests=false")
PYTEST_REPORT_ARGS = ("-rfEsxXp", *_JUNIT_OPTIONS, "--rootdir=.", "--junit-prefix=")
#: What a `command` run gets in `PYTEST_ADDOPTS`, before `--junitxml=` (see `runner.run_tests`): the report's
#: options alone, so that pytest started anywhere in the command (`make test`, `pytest | tail`) writes its junit
#: report where it is read, and the command's own options, output and node ids stay as they are. A command that
#: sets `--junitxml` or `PYTEST_ADDOPTS` itself wins: its run is then judged by the exit code.
PYTEST_COMMAND_ARGS = (*_JUNIT_OPTIONS, "--junit-prefix=")
_SUMMARY_RE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S.*)$")
_SUMMARY_OUTCOME: dict[str, Outcome] = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "XFAIL": "xfailed",
    "XPASS": "xpassed",
}
_TOTALS_RE = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b")
_TEARDOWN_PREFIX = "failed on teardown with "
_SETUP_PREFIX = "failed on setup with "
#: `XFAIL at teardown of ID`: an xfail-marked test's setup or teardown raised (pytest counts it as an xfail).
_XFAIL_PHASE_RE = re.compile(r"^at (setup|teardown) of (\S.*)$")
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
    outcomes: dict[str, list[Outcome]] = Field(default_factory=dict)
    """Every outcome pytest reported, its own first, for each test it reported more than once (an error or an xfail
    in its teardown after its own outcome); keyed by node id. Tests reported once are not in it."""

    def outcomes_of(self, case: TestCase) -> list[Outcome]:
        """What pytest reported for `case`: its own outcome, then those of a failed teardown."""
        return self.outcomes.get(case.id) or [case.outcome]


class _Part(BaseModel):
    """One report pytest made of a test: a junit `<failure>`/`<error>`/`<skipped>`, or one short summary line."""

    outcome: Outcome
    teardown: bool = False
    head: str = ""
    """The crash line (junit's `message`, or the text after ` - ` in the summary)."""
    text: str = ""
    """The traceback (junit only)."""

    def render(self, limit: int) -> str | None:
        if not self.head and not self.text:
            return None
        if self.outcome in ("skipped", "xfailed"):
            return _trim(self.head or self.text, limit) or None
        head = self.head
        if self.teardown and not head.startswith(_TEARDOWN_PREFIX):
            head = f'{_TEARDOWN_PREFIX}"{head}"'
        return _message(head, self.text, limit)


def parse_junit(
    path: Path, message_chars: int = 1500, max_bytes: int = MAX_REPORT_BYTES, root: Path | None = None
) -> ParsedReport:
    """Parse a pytest junit XML file; a missing, oversized or unreadable one gives `found=False`.

    `root` is pytest's rootdir (the workspace): a case's module is found there from its `classname` (see
    `junit_node_id`). A case without a name (a KeyboardInterrupt leaves `<testcase time="0.000" />`) is skipped.

    The file was written by the code under test, so it is opened without following symlinks and without blocking
    (opening a FIFO with no writer would wait forever), must be a regular file, and is not parsed when larger than
    `max_bytes`.
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
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
            tree = ET.parse(handle).getroot()
        except ET.ParseError as exc:
            return ParsedReport(problem=f"the junit report is not valid XML ({exc})")
    report = ParsedReport(found=True)
    parts: dict[str, list[_Part]] = {}
    durations: dict[str, float] = {}
    for case in tree.iter("testcase"):
        file = case.get("file") or ""
        classname, name = case.get("classname") or "", case.get("name") or ""
        if not name:
            continue
        node_id = junit_node_id(file, classname, name, root)
        found = parts.setdefault(node_id, [])
        durations[node_id] = durations.get(node_id, 0.0) + _float(case.get("time"))
        for child in case:
            head, text = (child.get("message") or "").strip(), (child.text or "").strip()
            if child.tag == "failure":
                found.append(_Part(outcome="failed", head=head, text=text))
            elif child.tag == "error":
                found.append(_Part(outcome="error", teardown=head.startswith(_TEARDOWN_PREFIX), head=head, text=text))
                if head == "collection failure":
                    report.collection_errors += 1
            elif child.tag == "skipped":
                outcome: Outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
                if head == "collection skipped":  # a module's skip: its reason is in the text
                    head, text = _collection_skip_reason(text) or head, ""
                found.append(_Part(outcome=outcome, head=head, text=text))
    for node_id, found in parts.items():
        _add_test(report, node_id, found, message_chars, round(durations[node_id], 4))
    return report


def parse_summary(output: str, message_chars: int = 1500) -> ParsedReport:
    """Parse the short test summary (`-r` lines) of pytest's terminal output."""
    report = ParsedReport()
    parts: dict[str, list[_Part]] = {}
    for line in output.splitlines():
        match = _SUMMARY_RE.match(line.rstrip())
        if match:
            label = match.group(1)
            node_id, message = split_summary(match.group(2))
            report.found = True
            phase = _XFAIL_PHASE_RE.match(node_id) if label == "XFAIL" else None
            if phase:
                node_id = phase.group(2)
            teardown = bool(phase and phase.group(1) == "teardown")
            part = _Part(outcome=_SUMMARY_OUTCOME[label], teardown=teardown, head=(message or "").strip())
            parts.setdefault(node_id, []).append(part)
            if label == "ERROR" and "::" not in node_id:
                report.collection_errors += 1
        elif line.startswith("SKIPPED ["):
            report.found = True
            count = re.match(r"SKIPPED \[(\d+)\]", line)
            report.skipped_without_id += int(count.group(1)) if count else 1
    for node_id, found in parts.items():
        _add_test(report, node_id, found, message_chars)
    return report


def _add_test(report: ParsedReport, node_id: str, parts: list[_Part], limit: int, duration: float = 0.0) -> None:
    """List a test once, with the worst of its outcomes, and keep them all in `report.outcomes` when there are several.

    Its own outcome is its first report that is not a teardown's and not an error, else its first error (setup),
    else `passed` (only a teardown failed). A summary `ERROR` line does not say its phase: next to another outcome of
    the same test it is the teardown's. The message is that of the failure or error, the others' first lines after it.
    """
    own = next((p for p in parts if not p.teardown and p.outcome != "error"), None)
    own = own or next((p for p in parts if not p.teardown), None)
    rest = [p for p in parts if p is not own]
    if own is not None and own.outcome != "error":
        rest = [p.model_copy(update={"teardown": True}) if p.outcome == "error" else p for p in rest]
    outcomes: list[Outcome] = [own.outcome if own else "passed", *(p.outcome for p in rest)]
    troubles = [p for p in rest if p.outcome in ("failed", "error")]
    main = own if own is not None and (own.outcome in ("failed", "error") or not troubles) else None
    main = main or (troubles.pop(0) if troubles else None)
    notes = [text.splitlines()[0] for p in troubles if (text := p.render(limit))]
    note = _trim("\n".join(notes), limit // 3) if notes else ""
    message = main.render(limit - len(note) - 1 if note else limit) if main else None
    if note:
        message = f"{message}\n{note}" if message else note
    report.tests.append(TestCase(id=node_id, outcome=_worst(outcomes), duration_s=duration, message=message))
    if len(outcomes) > 1:
        report.outcomes[node_id] = outcomes


def merge_reports(junit: ParsedReport, summary: ParsedReport) -> ParsedReport:
    """The junit tests, with exact node ids and xpasses from the summary; the summary alone when junit is missing.

    junit writes a non-strict xpass as a plain pass, and one whose teardown then failed under the xfail mark as an
    xfail only; the summary's `XPASS` line (and `XFAIL at teardown of`) say which it was. It also writes a subtest's
    skip (unittest's `subTest`, pytest's `subtests`) into its test's case, as if the test was skipped: the summary's
    `PASSED` line says the test ran. A failed subtest fails its test (as unittest reports it), whatever that line says.
    A test pytest reports failed without a phase (an xdist worker that crashed running it: `FAILED id - worker 'gw0'
    crashed`) is written by junit as an error `failed on setup`: the summary's `FAILED` line, with no `ERROR` line,
    makes it the failure it was.
    """
    if not junit.found:
        return summary
    by_address = {mangle(t.id): t for t in summary.tests}
    merged: list[TestCase] = []
    outcomes: dict[str, list[Outcome]] = {}
    for case in junit.tests:
        found = junit.outcomes_of(case)
        known = by_address.get(mangle(case.id))
        if known is not None:
            told = summary.outcomes_of(known)
            if told[0] == "xpassed" and found[0] == "passed":
                found = ["xpassed", *found[1:]]
            elif told[0] == "passed" and found[0] == "skipped":
                found = ["passed", *found[1:]]  # a subtest skipped (`SUBSKIPPED`); the test itself ran and passed
            elif told[0] == "xpassed" and found[0] == "xfailed" and len(told) > len(found):
                found = told
            elif told == ["failed"] and found == ["error"] and (case.message or "").startswith(_SETUP_PREFIX):
                found = ["failed"]  # a crash pytest reports with no phase (an xdist worker died): junit says setup
                head, _, rest = (case.message or "").partition("\n")
                wrapped = PHASE_RE.match(head)
                if wrapped:
                    case = case.model_copy(update={"message": wrapped.group(1) + (f"\n{rest}" if rest else "")})
            case = case.model_copy(update={"id": known.id, "outcome": _worst(found)})
        if len(found) > 1:
            outcomes[case.id] = found
        merged.append(case)
    return junit.model_copy(update={"tests": merged, "outcomes": outcomes})


def junit_node_id(file: str, classname: str, name: str, root: Path | None = None) -> str:
    """The node id behind a junit case (the inverse of `mangle`).

    `classname` (xunit1: the dotted path of the collecting module, then its classes) names the module the test was
    collected from; `file` is where its function is defined, another module for an inherited or imported test.
    So the module is the longest dotted prefix of `classname` that is a `.py` file under `root`; without one, `file`
    when `classname` starts with its module, else `classname` read as a module path.
    """
    if not classname:
        return file or name.replace(".", "/") + ".py"
    parts = classname.split(".")
    if root is not None:
        for end in range(len(parts), 0, -1):
            module = "/".join(parts[:end]) + ".py"
            try:
                found = (root / module).is_file()
            except OSError:
                found = False
            if found:
                return "::".join([module, *parts[end:], name])
    module = file[:-3].replace("/", ".") if file.endswith(".py") else ""
    if module and classname == module:
        return f"{file}::{name}"
    if module and classname.startswith(module + "."):
        classes = classname[len(module) + 1 :].split(".")
        return "::".join([file, *classes, name])
    if file and not file.endswith(".py"):
        return f"{file}::{name}"
    return classname.replace(".", "/") + f".py::{name}"


def split_summary(text: str) -> tuple[str, str | None]:
    """A short summary line's node id and message (`tests/t.py::test_f[a - b] - assert 0`).

    The id ends at the first ` - ` outside its parameter brackets: pytest's ids may contain ` - ` (`[a - b]`).
    """
    depth = 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        elif depth == 0 and text.startswith(" - ", i):
            return text[:i], text[i + 3 :]
    if depth:  # unbalanced brackets: the id is up to the last `]` before a ` - `
        cut = text.find("] - ")
        if cut != -1:
            return text[: cut + 1], text[cut + 4 :]
    return text.rstrip(), None


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


def _message(message: str, text: str, limit: int) -> str:
    """The crash line, then as much of the end of the traceback as fits in `limit`."""
    head = message.strip()
    if head in ("collection failure", ""):
        errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
        detail = errors[-1] if errors else (text.strip().splitlines() or ["unknown error"])[-1]
        head = f"{COLLECTION_PREFIX}{detail}" if message.strip() == "collection failure" else detail
    if not text or text == head:
        return _trim(head, limit)
    room = limit - len(head) - 1
    if room < 40:
        return _trim(head, limit)
    tail = text if len(text) <= room else "..." + text[len(text) - room + 3 :]
    return f"{head}\n{tail}"


def _collection_skip_reason(text: str) -> str | None:
    """The reason of a module-level skip, from junit's `('path', line, 'Skipped: reason')`; None when it is not that."""
    if not (text.startswith("(") and text.endswith(")")) or len(text) > 20_000:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not (isinstance(value, tuple) and len(value) == 3 and isinstance(value[2], str)):
        return None
    return value[2].removeprefix("Skipped: ") or None


def _worst(outcomes: list[Outcome]) -> Outcome:
    """The outcome that needs attention first (`OUTCOME_ORDER`): a failure, then an error, ..."""
    return min(outcomes, key=lambda outcome: OUTCOME_ORDER.get(outcome, 9))


def _trim(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _float(value: str | None) -> float:
    try:
        return round(float(value or 0.0), 4)
    except ValueError:
        return 0.0
