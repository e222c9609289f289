"""Turning a model's answer into a patch: SEARCH/REPLACE blocks (what the one-shot prompt asks for) or a diff.

Small models quote code far more reliably than they count hunk lines, so the prompt asks for Aider-style
SEARCH/REPLACE blocks; a fenced unified diff is accepted too. Blocks are applied to the file's text (exactly, else
line by line ignoring indentation and trailing space) and the result is expressed as a -p1 diff, which then goes
through the patch engine like any other patch. Parts of a patch that touch test files are dropped before grading:
the fix must be in the code.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent.tasks.model import is_test_path
from agent.tasks.mutate import unified_diff

BLOCK_RE = re.compile(
    r"(?P<path>[^\s`]+\.py)\s*\n(?:```[a-z]*\n)?<{5,9} SEARCH\n(?P<search>.*?)\n?={5,9}\n"
    # The closing marker, or (an answer cut at its token limit, a marker forgotten) the next block or the end.
    r"(?P<replace>.*?)(?:\n?>{5,9} REPLACE|(?=\n[^\s`]+\.py\s*\n(?:```[a-z]*\n)?<{5,9} SEARCH\n)|\Z)",
    re.DOTALL,
)
#: What pytest adds to the source lines it shows, which models copy into a SEARCH part: the `>` marking the
#: failing line, `E ` lines with the error, and `path.py:LINE: Error` locations.
_PYTEST_MARK_RE = re.compile(r"^>(?=\s)")
_PYTEST_NOISE_RE = re.compile(r"^(?:E\s.*|E|[^\s:]+\.py:\d+: \w+.*)$")
_FENCE_LINE_RE = re.compile(r"^```[a-z]*$")
DIFF_FENCE_RE = re.compile(r"```(?:diff|patch)\n(.*?)```", re.DOTALL)
_FILE_HEADER_RE = re.compile(r"^--- (?:a/)?(\S+)", re.MULTILINE)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _replace_once(text: str, search: str, replace: str) -> str | None:
    """`text` with the first occurrence of `search` replaced: exactly, else by stripped lines (re-indented)."""
    if search and search in text:
        return text.replace(search, replace, 1)
    want = [line.strip() for line in search.splitlines()]
    if not any(want):
        return None
    lines = text.splitlines(keepends=True)
    for start in range(len(lines) - len(want) + 1):
        if [line.strip() for line in lines[start : start + len(want)]] == want:
            have, given = _indent(lines[start]), _indent(search.splitlines()[0])
            body = []
            for line in replace.splitlines():
                rest = line[len(given) :] if line.startswith(given) else line.lstrip()
                body.append(have + rest + "\n" if line.strip() else "\n")
            return "".join(lines[:start]) + "".join(body) + "".join(lines[start + len(want) :])
    return None


def _quoted_source(search: str) -> str:
    """A SEARCH part without what pytest's traceback adds to source lines, when the model copied it from there."""
    lines = search.splitlines()
    if not any(_PYTEST_MARK_RE.match(line) or _PYTEST_NOISE_RE.match(line) for line in lines):
        return search
    kept = [_PYTEST_MARK_RE.sub(" ", line) for line in lines if not _PYTEST_NOISE_RE.match(line)]
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def _drop_fences(replace: str) -> str:
    """A REPLACE part without the code-fence lines that wrap a block (kept inside the closing marker by some)."""
    lines = replace.splitlines()
    if not any(_FENCE_LINE_RE.match(line.strip()) for line in lines[-3:]):
        return replace
    while lines and (_FENCE_LINE_RE.match(lines[-1].strip()) or not lines[-1].strip()):
        lines.pop()
    return "\n".join(lines)


def blocks_to_patch(answer: str, workspace: Path) -> str:
    """A diff of every SEARCH/REPLACE block of `answer` that applies (others are skipped), or ''."""
    files: dict[str, tuple[str, str]] = {}
    for match in BLOCK_RE.finditer(answer):
        rel = match.group("path").strip().lstrip("./")
        path = workspace / rel
        if rel in files:
            before, current = files[rel]
        elif path.is_file() and path.resolve().is_relative_to(workspace.resolve()):
            before = current = path.read_text(encoding="utf-8")
        else:
            continue
        changed = _replace_once(current, _quoted_source(match.group("search")), _drop_fences(match.group("replace")))
        if changed is not None:
            files[rel] = (before, changed)
    return "".join(unified_diff(rel, before, after) for rel, (before, after) in files.items() if before != after)


def answer_to_patch(answer: str, workspace: Path) -> str:
    """The patch an answer proposes: its SEARCH/REPLACE blocks, else its first fenced diff, else ''."""
    patch = blocks_to_patch(answer, workspace)
    if patch:
        return patch
    fenced = DIFF_FENCE_RE.search(answer)
    if fenced:
        return fenced.group(1)
    stripped = answer.strip()
    return stripped + "\n" if stripped.startswith(("--- ", "diff --git")) else ""


def drop_test_files(patch: str) -> str:
    """`patch` without the file sections that touch test files."""
    boundary = r"(?m)^(?=diff --git )" if re.search(r"(?m)^diff --git ", patch) else r"(?m)^(?=--- )"
    kept: list[str] = []
    for section in re.split(boundary, patch):
        header = _FILE_HEADER_RE.search(section)
        if header and section.startswith(("--- ", "diff --git")) and is_test_path(header.group(1)):
            continue
        kept.append(section)
    return "".join(kept)
