"""The syntax check compiles only the blocks a patch wrote, and reports exactly what a full compile reports."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.patch import apply_patch
from sandbox.patch.hunks import apply_hunks
from sandbox.patch.parse import parse_patch
from sandbox.patch.textfile import TextFile
from sandbox.syntax import (
    _LINE_OF_INTEREST,
    _TOP_BLOCK_LINE,
    _Touched,
    changed_syntax_error,
    file_syntax_error,
    split_blocks,
    syntax_error,
)
from sandbox.syntax_worker_main import check, lines_text


def _long_module() -> list[str]:
    """A module of 40 functions and a 60-method class: long enough to be checked block by block."""
    lines = ['"""A long module."""', "", "import os", ""]
    for n in range(40):
        lines += [f"def f{n}(x):", f'    """Doc of f{n}', "def not_a_boundary():", '    """', f"    return x + {n}", ""]
    lines += ["class Big:", '    """Big."""', ""]
    for n in range(60):
        lines += ["    @property", f"    def m{n}(self):", f"        return {n}", ""]
    lines += ["", "TAIL = 1"]
    return lines


def _check(lines: list[str], changed: list[tuple[int, int]]) -> tuple[int | None, str] | None:
    return changed_syntax_error("\n".join(lines).encode(), lines, changed, "m.py")


def test_blocks_cover_the_file_and_skip_defs_inside_docstrings() -> None:
    lines = _long_module()
    chunks = split_blocks(lines)
    assert chunks[0][0] == 0
    assert chunks[-1][1] == len(lines)
    assert all(a[1] == b[0] for a, b in pairwise(chunks))
    starts = {lines[first] for first, _, _ in chunks}
    assert "def not_a_boundary():" not in starts
    assert "    @property" in starts  # the members of the long class, each with its decorator
    assert "    def m0(self):" not in starts


def test_an_error_in_a_changed_method_is_reported_at_its_line_in_the_file() -> None:
    lines = _long_module()
    at = lines.index("    def m30(self):") + 1
    lines[at] = "        return (30"
    expected = syntax_error("\n".join(lines).encode(), "m.py")
    assert expected is not None
    assert _check(lines, [(at, at + 1)]) == expected


def test_a_return_moved_to_module_level_is_reported() -> None:
    lines = _long_module()
    at = lines.index("def f12(x):") + 4
    lines[at] = "return x"
    assert _check(lines, [(at, at + 1)]) == (at + 1, "'return' outside function")


def test_a_string_opened_in_a_changed_block_that_swallows_the_rest_is_reported() -> None:
    lines = _long_module()
    at = lines.index("def f3(x):") + 4
    lines[at] = '    return """'
    assert _check(lines, [(at, at + 1)]) == syntax_error("\n".join(lines).encode(), "m.py")


def test_removed_lines_check_both_blocks_around_the_seam() -> None:
    lines = _long_module()
    at = lines.index("def f20(x):")
    del lines[at - 2 : at]  # the end of f19 and the blank line: f19's body now ends without its return
    lines[at - 3] = "    return ("
    assert _check(lines, [(at - 2, at - 2)]) == syntax_error("\n".join(lines).encode(), "m.py")


def test_an_error_in_a_block_the_patch_did_not_touch_is_not_reported() -> None:
    lines = _long_module()
    lines[lines.index("def f30(x):") + 4] = "    return (x"
    changed = lines.index("def f5(x):") + 4
    assert _check(lines, [(changed, changed + 1)]) is None
    assert _check(lines, []) is None


def test_a_short_file_is_compiled_whole() -> None:
    lines = ["def a():", "    return (", "", "def b():", "    return 2"]
    assert _check(lines, [(4, 5)]) == (2, "'(' was never closed")


def test_apply_patch_reports_the_syntax_error_its_hunk_makes_in_a_long_file(tmp_path: Path) -> None:
    lines = _long_module()
    (tmp_path / "m.py").write_text("\n".join(lines) + "\n")
    at = lines.index("    def m41(self):") + 1
    patch = (
        f"--- a/m.py\n+++ b/m.py\n@@ -{at},3 +{at},3 @@\n {lines[at - 1]}\n-{lines[at]}\n+        return (41\n"
        f" {lines[at + 1]}\n"
    )
    result = apply_patch(tmp_path, patch)
    assert [(s.path, s.line) for s in result.syntax_errors] == [("m.py", at + 1)]


def test_blocks_of_a_file_with_future_imports_compile_with_them() -> None:
    lines = ["from __future__ import annotations", *_long_module()]
    at = lines.index("def f7(x):") + 4
    lines[at] = "    y: undefined_name = x"
    assert _check(lines, [(at, at + 1)]) is None
    lines[at] = "    y: int = (x"
    assert _check(lines, [(at, at + 1)]) == syntax_error("\n".join(lines).encode(), "m.py")


def test_a_future_import_moved_below_code_by_the_patch_is_reported() -> None:
    lines = _long_module()
    lines.insert(3, "from __future__ import annotations")
    assert _check(lines, [(3, 4)]) == (4, "from __future__ imports must occur at the beginning of the file")


def test_the_lines_a_hunk_wrote_are_its_added_lines_and_where_it_removed_some_never_its_context() -> None:
    original = TextFile.decode("".join(f"line {n}\n" for n in range(12)).encode())
    patch = (
        "--- a/m.txt\n+++ b/m.txt\n@@ -2,8 +2,8 @@\n line 1\n line 2\n line 3\n-line 4\n+LINE 4\n+line 4b\n line 5\n"
        " line 6\n-line 7\n line 8\n"
    )
    (section,) = parse_patch(patch)
    outcome = apply_hunks(original, section.hunks, informative=False)
    assert outcome.text is not None
    assert outcome.changed == [(4, 6), (8, 8)]  # "LINE 4", "line 4b"; then where "line 7" was
    assert outcome.text.lines[4:6] == ["LINE 4", "line 4b"]
    assert outcome.text.lines[7:9] == ["line 6", "line 8"]


def _touched_by_scan(first: int, last: int, changed: list[tuple[int, int]]) -> bool:
    """The definition: a span meets `[first, last)`; removed lines (an empty span) meet both sides of the seam."""
    for start, end in changed:
        lo, hi = (max(start - 1, 0), start + 1) if end <= start else (start, end)
        if first < hi and lo < last:
            return True
    return False


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 8)), max_size=8),
    st.lists(st.tuples(st.integers(0, 70), st.integers(0, 30)), min_size=1, max_size=12),
)
def test_a_block_counts_as_touched_exactly_when_a_changed_span_meets_it(
    spans: list[tuple[int, int]], blocks: list[tuple[int, int]]
) -> None:
    changed = [(start, start + size) for start, size in spans]
    touched = _Touched(changed)
    for first, size in blocks:
        assert touched(first, first + size) == _touched_by_scan(first, first + size, changed)


_PIECES = [
    "def ",
    "def\t",
    "def",
    "class ",
    "class",
    "@",
    "async ",
    "async\tdef ",
    "async def ",
    " ",
    "\t",
    "#",
    ")",
    "x",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=4).map("".join), max_size=12).map("\n".join))
def test_block_lines_are_found_where_the_plain_patterns_find_them(text: str) -> None:
    top = re.compile(r"\n(?=(?:async[ \t]+)?def[ \t]|class[ \t]|@)")
    member = re.compile(r"\n(?=[^\s#)]|[ \t]*(?:async[ \t]+def|def|class|@))")
    text = "\n" + text
    assert [m.start() for m in _TOP_BLOCK_LINE.finditer(text)] == [m.start() for m in top.finditer(text)]
    assert [m.start() for m in _LINE_OF_INTEREST.finditer(text)] == [m.start() for m in member.finditer(text)]


_SOURCE_PIECES = [
    "def f(x):",
    "    return x",
    "class C:",
    "    def m(self):",
    "        pass",
    "    @property",
    "@decorator",
    '"""',
    "'''",
    "x = (1,",
    "    2)",
    "return x",
    "async def g():",
    "    await h()",
    "line \\",
    "",
    "# comment",
    "if x:",
    "pass",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_SOURCE_PIECES), min_size=90, max_size=260),
    st.lists(st.tuples(st.integers(0, 259), st.integers(0, 3)), min_size=1, max_size=6),
    st.sampled_from(["", "\n"]),
    st.booleans(),
)
def test_the_worker_checks_the_bytes_as_the_engine_checks_the_lines(
    pieces: list[str], spans: list[tuple[int, int]], ending: str, bom: bool
) -> None:
    """The syntax worker reads a job's text straight from its bytes (`lines_text`) and cuts blocks by offsets; it
    must find the engine's lines and report the engine's error for every file and change."""
    source = ("\ufeff" if bom else "") + "\n".join(pieces) + ending
    data = source.encode()
    lines = TextFile.decode(data).lines
    assert lines_text(data) == "\n" + "\n".join(lines)
    changed = [(min(start, len(lines)), min(start + size, len(lines))) for start, size in spans]
    assert check(data, None, changed, "m.py") == file_syntax_error(data, lines, changed, "m.py")
    assert check(data, "\n".join(lines), changed, "m.py") == file_syntax_error(data, lines, changed, "m.py")
    assert check(data, None, None, "m.py") == syntax_error(data, "m.py")


def test_text_of_empty_and_unterminated_files() -> None:
    assert lines_text(b"") == "\n"
    assert lines_text(b"a\nb") == "\na\nb"
    assert lines_text(b"a\nb\n") == "\na\nb"
    assert lines_text(b"\n") == "\n"
    assert lines_text("\ufeffé\n".encode()) == "\né"
    assert lines_text(b"\xff\n") == "\n\udcff"  # not UTF-8: kept through surrogateescape, as the engine keeps it
