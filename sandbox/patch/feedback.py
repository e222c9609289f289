"""The refusal text a model reads: which file and hunk, the lines expected, the closest actual lines with their
numbers, which other hunks would have applied, and how to fix the patch."""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from sandbox.patch.anchors import AnchorMissing
from sandbox.patch.hunks import FileOutcome, HunkResult
from sandbox.patch.indent import IndentMismatch
from sandbox.patch.match import Ambiguity, EdgeMismatch, ScopeMismatch, fold
from sandbox.patch.ops import FilePatch, Hunk
from sandbox.patch.textfile import MAX_QUOTED_CHARS, REPLACEMENT, clip, first_difference, has_odd_bytes

MAX_SHOWN_LINES = 40
MAX_DETAILED = 10
_SIMILARITY_SCAN_LIMIT = 20_000


@dataclass
class Problem:
    path: str
    message: str
    fix: str = ""
    section: FilePatch | None = None
    outcome: FileOutcome | None = None
    """Set for hunks that did not apply; the message then introduces them."""
    made_already: bool = False
    """The problem is only that the change stands in the workspace already (a new file there with its content)."""


@dataclass
class Refusal:
    problems: list[Problem] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    """`path: hunks 1, 3` for the hunks that would have applied."""

    def render(self) -> str:
        blocks: list[str] = []
        for problem in self.problems:
            blocks.extend(_render_problem(problem))
        count = len(blocks)
        shown = blocks[:MAX_DETAILED]
        if count > MAX_DETAILED:
            shown.append(f"... and {count - MAX_DETAILED} more problem(s) like these.")
        head = f"apply_patch refused, nothing was written. {count} problem(s):"
        if not self.applied and self.problems and all(_made_already(problem) for problem in self.problems):
            # the same patch sent again: a model told to fix and resend it would loop
            done = "Every hunk of this patch is in the files already: nothing is left to apply."
            return "\n\n".join([head, *shown, done])
        tail = (
            "Hunks that would have applied: " + "; ".join(self.applied) + "."
            if self.applied
            else "No other hunk of this patch would have applied."
        )
        return "\n\n".join([head, *shown, tail, "Fix the problems above and send the whole patch again."])


def _made_already(problem: Problem) -> bool:
    """Whether every hunk of the problem is one whose change stands in the file already (`_applied_at`), refused
    only for that."""
    if problem.outcome is None or problem.section is None:
        return problem.made_already
    lines = problem.outcome.original.lines
    return all(
        result.problem is None
        and (not result.hunk.old_lines or _exact_at(lines, result.hunk.old_lines) is None)
        and _applied_at(lines, result.hunk) is not None
        for result in problem.outcome.failed
    )


def _render_problem(problem: Problem) -> list[str]:
    if problem.outcome is None or problem.section is None:
        return [f"{problem.path}: {problem.message}\nHow to fix: {problem.fix}"]
    total = len(problem.section.hunks)
    return [_render_hunk(problem, result, total) for result in problem.outcome.failed]


def _render_hunk(problem: Problem, result: HunkResult, total: int) -> str:
    assert problem.outcome is not None
    assert problem.section is not None
    hunk = result.hunk
    lines = problem.outcome.original.lines
    where = f"{problem.path}, hunk {hunk.number} of {total} ({hunk.header.strip()[:80]}, patch line {hunk.patch_line})"
    codex = problem.section.fmt == "codex"
    missing = result.problem
    if isinstance(missing, AnchorMissing) and missing.alone is not None:
        after = f" (line {missing.previous_at + 1})" if missing.previous_at is not None else ""
        return (
            f"{where}: the anchor `@@ {clip(missing.anchor)}` is at line {missing.alone + 1}, but not after the "
            f"anchor before it, `@@ {clip(missing.previous)}`{after}: each anchor is looked for below the one "
            "before it.\n"
            "How to fix: list the `@@` anchors in the order of their lines in the file, outermost first, and check "
            "that they name the class or function that really contains the change."
        )
    if isinstance(result.problem, AnchorMissing):
        similar = _closest_line(lines, result.problem.anchor)
        hint = f" The most similar line is {similar[0] + 1}: {clip(similar[1].strip())!r}." if similar else ""
        return (
            f"{where}: the anchor `@@ {clip(result.problem.anchor)}` matches no line of the file.{hint}\n"
            "How to fix: the text after `@@` must be a whole line of the file (or its beginning), such as the "
            "`def` or `class` line that contains the change; or leave the anchor out."
        )
    if isinstance(result.problem, Ambiguity):
        numbers = ", ".join(str(p + 1) for p in result.problem.positions[:20])
        extra = (
            "add an `@@ <line>` anchor naming the enclosing class or function"
            if codex
            else "put the intended line number in the `@@ -l,n +l,n @@` header"
        )
        why = result.problem.note or f"its lines match equally well at lines {numbers} ({result.problem.level} match)"
        return (
            f"{where}: {why}.\n"
            f"{_expected(hunk)}\n"
            f"How to fix: add context lines that occur only at the intended place, or {extra}."
        )
    if isinstance(result.problem, ScopeMismatch):
        mismatch = result.problem
        return (
            f"{where}: its lines were found only with reduced context, at line {mismatch.position + 1}, and "
            f"{mismatch.reason}; it was not applied there.\n"
            f"{_expected(hunk)}\n{_closest_block(lines, hunk, mismatch.window)}\n"
            f"How to fix: re-read {problem.path} and copy the hunk's context lines exactly as they are now, including "
            "the `def`/`class` line that encloses the change; if the edit belongs at that line, use its context."
        )
    if isinstance(result.problem, IndentMismatch):
        return (
            f"{where}: {result.problem.reason}; it was not applied.\n"
            f"{_expected(hunk)}\n{_closest_block(lines, hunk, result.problem.position)}\n"
            f"How to fix: re-read {problem.path} and write the hunk with the file's own indentation (the same number "
            "of spaces or tabs a level), context and added lines alike."
        )
    if isinstance(result.problem, EdgeMismatch):
        parts = [f"{where}: {result.problem.reason}; it was not applied there."]
        if hunk.old_lines:
            parts.append(_expected(hunk))
            if lines:
                parts.append(_closest_block(lines, hunk, result.problem.position))
        parts.append(
            f"How to fix: re-read the end of {problem.path}: the lines that now follow belong in the hunk as context, "
            "and the `\\ No newline at end of file` marker only follows the file's real last line."
        )
        return "\n".join(parts)
    placed = _exact_at(lines, hunk.old_lines) if hunk.old_lines else None
    if placed is not None:  # there, but before where the hunks before it left off: order or overlap
        return (
            f"{where}: its context and removed lines are in the file at line {placed + 1}, but a hunk before it in the "
            "patch was applied at or after that place (the hunks of a file apply in the file's order and must not "
            f"overlap).\n{_expected(hunk)}\n"
            f"How to fix: list the hunks of {problem.path} in the order of their lines in the file, and merge hunks "
            "that change the same or adjacent lines into one."
        )
    done = _applied_at(lines, hunk)
    if done is not None:  # the change is in the file already: the patch (or this hunk) was sent before
        return (
            f"{where}: its context and removed lines were not found, but its new side (context and added lines) is "
            f"already in the file at line {done + 1}: this change looks made already (by a patch sent before, or an "
            f"earlier section of this patch for the same file).\n{_expected(hunk)}\n"
            f"How to fix: if {problem.path} already holds the change, leave this hunk out of the patch and send only "
            "the hunks still to apply; otherwise re-read the file there and copy its lines exactly as they are now."
        )
    expected_at = hunk.old_start
    start = closest_window(lines, hunk.old_lines, expected_at)
    closest = _closest_block(lines, hunk, start) if start is not None else "The file is empty."
    near = f" near line {start + 1}" if start is not None else ""
    if _numbered(lines, hunk):
        where_said = "an `@@ <line>` anchor says where" if codex else "the `@@ -l,n +l,n @@` header says where"
        return (
            f"{where}: its context and removed lines were not found in the file: they start with line numbers, "
            f"copied from a numbered view of the file (`cat -n`, a read tool's output).\n{_expected(hunk)}\n"
            f"{closest}\nHow to fix: leave the numbers out, and the tab or separator after them: each hunk line is "
            f"its ' ', '-' or '+' then the file's line exactly as it is ({where_said})."
        )
    elided = _elision(lines, hunk)
    if elided is not None:
        return (
            f"{where}: its context and removed lines were not found in the file: its line {elided!r} stands for "
            f"lines left out, and a hunk must list every line it spans.\n{_expected(hunk)}\n{closest}\n"
            f"How to fix: split the hunk in two at that line (each with its own `@@` header and context), or copy "
            f"the lines it stands for from {problem.path}{near}."
        )
    return (
        f"{where}: its context and removed lines were not found in the file.\n{_expected(hunk)}\n{closest}\n"
        f"How to fix: re-read {problem.path}{near} and copy the context (' ') and removed ('-') lines exactly as "
        "they are in the file now, whitespace included; keep the lines in the file's order."
    )


#: A line number and its separator at the start of a line copied from a numbered view: `cat -n`'s `     4\t`, an
#: editor tool's `     4→`, `4 | `, `4: `.
_NUMBERED = re.compile(r"\s*\d+(?:\t|\u2192| ?\| ?|: ?)")


def _numbered(lines: list[str], hunk: Hunk) -> bool:
    """Whether every context and removed line of `hunk` that is not blank starts with a line number, and the first
    of them, without it, is a line of the file."""
    old = [text for text in hunk.old_lines if text.strip()]
    heads = [_NUMBERED.match(text) for text in old]
    if not old or not all(heads):
        return False
    first = heads[0]
    assert first is not None
    return old[0][first.end() :] in lines


#: A line a model writes for lines it left out: `...`, `…`, `# ... rest unchanged`, `// ... existing code ...`.
_ELISION = re.compile(r"(?:#|//|/\*|<!--|--|;|\*)?\s*(?:\.\.\.|\u2026)")


def _elision(lines: list[str], hunk: Hunk) -> str | None:
    """The first context or removed line of `hunk` that stands for left-out lines and is not a line of the file."""
    for line in hunk.lines:
        text = line.text.strip()
        if line.op != "+" and text and _ELISION.match(text) and line.text not in lines:
            return text
    return None


def _exact_at(lines: list[str], want: list[str]) -> int | None:
    """The first place where `want` stands in `lines`, line for line."""
    first, size = want[0], len(want)
    for at, line in enumerate(lines):
        if line == first and lines[at : at + size] == want:
            return at
    return None


def _applied_at(lines: list[str], hunk: Hunk) -> int | None:
    """Where the hunk's new side stands in `lines`, line for line (the one nearest its stated line), when it adds a
    line that is not blank: a hunk adding only blank lines, or only removing, would find its new side by chance."""
    if not any(line.op == "+" and line.text.strip() for line in hunk.lines):
        return None
    want = hunk.new_lines
    first, size, found = want[0], len(want), []
    for at, line in enumerate(lines):
        if line == first and lines[at : at + size] == want:
            found.append(at)
    if not found:
        return None
    stated = hunk.old_start
    return min(found, key=lambda at: abs(at - stated)) if stated is not None else found[0]


def _expected(hunk: Hunk) -> str:
    body = [line for line in hunk.lines if line.op != "+"]
    shown = [f"    {line.op}{clip(line.text)}" for line in body[:MAX_SHOWN_LINES]]
    if len(body) > MAX_SHOWN_LINES:
        shown.append(f"    ... ({len(body) - MAX_SHOWN_LINES} more lines)")
    return "Expected these lines (' ' context, '-' removed):\n" + "\n".join(shown)


def _closest_block(lines: list[str], hunk: Hunk, start: int) -> str:
    want = hunk.old_lines
    window = lines[start : start + min(len(want), MAX_SHOWN_LINES)]
    width = len(str(start + len(window)))
    rows: list[str] = []
    same = 0
    for offset, actual in enumerate(window):
        expected = want[offset] if offset < len(want) else None
        if actual == expected:
            mark = " "
            same += 1
        elif expected is not None and _squeeze(actual) == _squeeze(expected):
            mark = "~"
        else:
            mark = "!"
        column = 0 if expected is None or mark == " " else first_difference(actual, expected)
        rows.append(f"  {mark} {start + offset + 1:>{width}} | {clip(actual, column)}")
        if column and expected is not None and max(len(actual), len(expected)) > MAX_QUOTED_CHARS:
            pad = " " * (width + 2)
            rows.append(f"    {pad}the hunk has, from column {column + 1}: {clip(expected[column:])}")
    first, last = start + 1, start + len(window)
    head = (
        f"Closest lines in the file, {first}-{last} ({same} of {len(window)} identical; "
        "'~' differs only in whitespace or punctuation, '!' differs):"
    )
    odd = [str(start + offset + 1) for offset, actual in enumerate(window) if has_odd_bytes(actual)]
    if odd:  # the model cannot write those bytes; U+FFFD is what it reads for them, and what matches them
        which = f"line {odd[0]} holds" if len(odd) == 1 else f"lines {', '.join(odd)} hold"
        rows.append(
            f"Note: {which} bytes that are not UTF-8 (the file is in another encoding, such as Latin-1): write each "
            f"such byte, or run of them, as U+FFFD '{REPLACEMENT}' in the hunk's context and removed lines; the file "
            "keeps its own bytes on context lines."
        )
    return head + "\n" + "\n".join(rows)


def _squeeze(text: str) -> str:
    return "".join(fold(text).split())


def closest_window(lines: list[str], want: list[str], expected: int | None) -> int | None:
    """The start of the file window most like `want`: most lines equal after folding, then nearest `expected`."""
    if not lines:
        return None
    if not want:
        return min(max(expected or 0, 0), len(lines) - 1)
    index: dict[str, list[int]] = defaultdict(list)
    for j, text in enumerate(lines):
        key = fold(text)
        if key:
            index[key].append(j)
    votes: Counter[int] = Counter()
    for i, text in enumerate(want):
        for j in index.get(fold(text), ()):
            votes[j - i] += 1
    if not votes:
        votes = _similar_votes(lines, want)
    if not votes:
        return min(max(expected or 0, 0), len(lines) - 1)
    best = max(votes.values())
    starts = [s for s, v in votes.items() if v == best]
    chosen = min(starts, key=lambda s: (abs(s - expected) if expected is not None else 0, s))
    return min(max(chosen, 0), len(lines) - 1)


def _similar_votes(lines: list[str], want: list[str]) -> Counter[int]:
    """When no line is equal: place the window by the file line most similar to one of the longest wanted lines."""
    votes: Counter[int] = Counter()
    if len(lines) > _SIMILARITY_SCAN_LIMIT:
        return votes
    longest = sorted(range(len(want)), key=lambda i: -len(want[i].strip()))[:3]
    for i in longest:
        near = _closest_line(lines, want[i])
        if near is not None:
            votes[near[0] - i] += 1
    return votes


def _closest_line(lines: list[str], text: str) -> tuple[int, str] | None:
    target = fold(text)
    if not target or len(lines) > _SIMILARITY_SCAN_LIMIT:
        return None
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    best: tuple[float, int] = (0.0, -1)
    for j, line in enumerate(lines):
        matcher.set_seq1(fold(line))
        if matcher.real_quick_ratio() > best[0] and matcher.quick_ratio() > best[0]:
            ratio = matcher.ratio()
            if ratio > best[0]:
                best = (ratio, j)
    if best[1] < 0 or best[0] < 0.5:
        return None
    return best[1], lines[best[1]]


def applied_summary(path: str, results: list[HunkResult], total: int) -> str | None:
    """`path: hunks 1, 3` (or `all N hunks`) for the hunks of a file that were placed."""
    placed = [r.hunk.number for r in results if r.match is not None]
    if not placed:
        return None
    if len(placed) == total:
        return f"{path}: all {total} hunk(s)"
    return f"{path}: hunk(s) {', '.join(map(str, placed))} of {total}"
