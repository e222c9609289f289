"""Property tests: random files and edits, diffed by difflib, must apply to give exactly the edited file,
also after lines were inserted above the hunks and after trailing whitespace changed."""

from __future__ import annotations

import difflib
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sandbox.patch import apply_patch

PROPERTY_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)

common_lines = st.sampled_from(["", "a", "b", "c", "    return x", "def f():", "}", "  # note", "x = 1  ", "\t"])
words = st.text(alphabet="abcdefgh ", max_size=8).map(str.strip)


def unified(old: str, new: str, path: str = "f.txt") -> str:
    """A unified diff as GNU diff writes it, `\\ No newline at end of file` included."""
    out: list[str] = []
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}")
    for line in lines:
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _apply(old: str, patch: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_bytes(old.encode())
        apply_patch(root, patch)
        return (root / "f.txt").read_bytes().decode()


def _text(lines: list[str], final_newline: bool = True) -> str:
    return "\n".join(lines) + ("\n" if final_newline and lines else "")


@st.composite
def unique_edit(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Unique old lines and an edit of them: kept, deleted, replaced, or followed by inserted lines."""
    old = [f"line {i} {w}".rstrip() for i, w in enumerate(draw(st.lists(words, min_size=1, max_size=60)))]
    new: list[str] = []
    fresh = 0
    for line in old:
        action = draw(st.sampled_from(["keep"] * 6 + ["delete", "replace", "insert"]))
        if action in ("keep", "insert"):
            new.append(line)
        if action == "replace":
            new.append(f"{line} changed")
        if action == "insert":
            count = draw(st.integers(1, 3))
            new += [f"new {fresh + k}" for k in range(count)]
            fresh += count
    assume(new != old)
    return old, new


@PROPERTY_SETTINGS
@given(st.lists(common_lines, max_size=40), st.lists(common_lines, max_size=40), st.booleans(), st.booleans())
def test_difflib_diff_of_any_edit_applies_exactly(old: list[str], new: list[str], old_nl: bool, new_nl: bool):
    before, after = _text(old, old_nl), _text(new, new_nl)
    assume(before != after)
    assert _apply(before, unified(before, after)) == after


def _hunk_ranges(patch: str) -> list[tuple[int, int, int]]:
    """(old start index, old length, new minus old length) of each hunk."""
    ranges = []
    for m in _HUNK_RE.finditer(patch):
        old_len = 1 if m.group(2) is None else int(m.group(2))
        new_len = 1 if m.group(4) is None else int(m.group(4))
        start = int(m.group(1)) - (1 if old_len else 0)
        ranges.append((start, old_len, new_len - old_len))
    return ranges


def _insert_above_hunks(old: list[str], new: list[str], patch: str, sizes: list[int]) -> tuple[list[str], list[str]]:
    """Insert fresh lines just above every hunk, in the old file and at the same place in the new one."""
    drifted_old, drifted_new = list(old), list(new)
    shift_old = shift_new = delta = 0
    for number, ((start, _, change), size) in enumerate(zip(_hunk_ranges(patch), sizes, strict=False)):
        block = [f"drift {number}.{k}" for k in range(size)]
        drifted_old[start + shift_old : start + shift_old] = block
        drifted_new[start + delta + shift_new : start + delta + shift_new] = block
        shift_old += size
        shift_new += size
        delta += change
    return drifted_old, drifted_new


@PROPERTY_SETTINGS
@given(unique_edit(), st.lists(st.integers(1, 12), min_size=1, max_size=20))
def test_diff_still_applies_after_lines_are_inserted_above_the_hunks(edit, sizes: list[int]):
    old, new = edit
    patch = unified(_text(old), _text(new))
    sizes = (sizes * 20)[: len(_hunk_ranges(patch))]
    drifted_old, drifted_new = _insert_above_hunks(old, new, patch, sizes)
    assert _apply(_text(drifted_old), patch) == _text(drifted_new)


@PROPERTY_SETTINGS
@given(unique_edit(), st.data())
def test_diff_still_applies_after_trailing_whitespace_changed(edit, data: st.DataObject):
    old, new = edit
    patch = unified(_text(old), _text(new))
    changed_old, changed_new = list(old), list(new)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag != "equal":
            continue
        for k in range(i2 - i1):
            suffix = data.draw(st.sampled_from(["", "", " ", "  ", "\t", " \t"]))
            changed_old[i1 + k] += suffix
            changed_new[j1 + k] += suffix
    assert _apply(_text(changed_old), patch) == _text(changed_new)


@PROPERTY_SETTINGS
@given(unique_edit())
def test_the_same_edit_as_a_codex_envelope_applies(edit):
    old, new = edit
    body = ["*** Begin Patch", "*** Update File: f.txt"]
    for line in difflib.unified_diff(old, new, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        body.append("@@" if line.startswith("@@") else line)
    body.append("*** End Patch")
    assert _apply(_text(old), "\n".join(body) + "\n") == _text(new)
