"""The matching ladder: exact, offset, whitespace, unicode punctuation, reduced context; ambiguity is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

HashTree = Callable[[Path], str]


def _file(tmp_path: Path, lines: list[str], name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _hunk(start: int, body: list[str], name: str = "f.txt") -> str:
    old = sum(1 for line in body if not line.startswith("+"))
    new = sum(1 for line in body if not line.startswith("-"))
    return f"--- a/{name}\n+++ b/{name}\n@@ -{start},{old} +{start},{new} @@\n" + "".join(f"{b}\n" for b in body)


NUMBERS = [f"n{i}" for i in range(1, 31)]


def test_exact_match_at_the_stated_line_reports_no_offset(tmp_path: Path):
    path = _file(tmp_path, NUMBERS)
    result = apply_patch(tmp_path, _hunk(9, [" n9", " n10", "-n11", "+eleven", " n12"]))
    assert "eleven\n" in path.read_text()
    change = result.files[0]
    assert (change.offset_lines, change.fuzzy, change.match) == (0, False, "exact")


def test_moved_hunk_is_found_at_the_nearest_offset(tmp_path: Path):
    path = _file(tmp_path, ["new top"] * 5 + NUMBERS)
    result = apply_patch(tmp_path, _hunk(9, [" n9", " n10", "-n11", "+eleven", " n12"]))
    assert path.read_text().splitlines()[15] == "eleven"
    assert (result.files[0].offset_lines, result.files[0].match, result.files[0].fuzzy) == (5, "offset", False)


def test_later_hunks_carry_the_drift_of_earlier_ones(tmp_path: Path):
    lines = ["x"] * 3 + NUMBERS
    path = _file(tmp_path, lines)
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n"
        "@@ -2,3 +2,3 @@\n n2\n-n3\n+three\n n4\n"
        "@@ -20,3 +20,3 @@\n n20\n-n21\n+twenty-one\n n22\n"
    )
    result = apply_patch(tmp_path, patch)
    text = path.read_text()
    assert "three\n" in text
    assert "twenty-one\n" in text
    assert result.files[0].offset_lines == 3


def test_trailing_whitespace_differences_are_tolerated(tmp_path: Path):
    path = _file(tmp_path, ["keep   ", "old\t", "tail "])
    result = apply_patch(tmp_path, _hunk(1, [" keep", "-old", "+new", " tail"]))
    assert path.read_text() == "keep   \nnew\ntail \n"
    assert (result.files[0].match, result.files[0].fuzzy) == ("trailing_ws", True)
    assert "check the result" in result.warnings[0]


def test_indentation_drift_is_tolerated_and_added_lines_follow_the_file(tmp_path: Path):
    path = _file(tmp_path, ["class A:", "    def f(self):", "        x = 1", "        return x"], "a.py")
    patch = _hunk(2, [" def f(self):", "-    x = 1", "+    x = 2", "+    y = 3", "     return x"], "a.py")
    result = apply_patch(tmp_path, patch)
    assert path.read_text() == "class A:\n    def f(self):\n        x = 2\n        y = 3\n        return x\n"
    assert result.files[0].match == "surrounding_ws"


def test_reduced_context_applies_like_gnu_fuzz(tmp_path: Path):
    lines = ["a", "b", "c", "target", "d", "e", "f"]
    path = _file(tmp_path, lines)
    patch = _hunk(1, [" A-changed", " b", " c", "-target", "+hit", " d", " e", " F-changed"])
    result = apply_patch(tmp_path, patch)
    assert path.read_text() == "a\nb\nc\nhit\nd\ne\nf\n"
    assert result.files[0].match == "fuzz1"
    assert "2 outer context line(s) ignored" in result.warnings[0]


def test_two_outer_context_lines_may_differ_at_fuzz_two(tmp_path: Path):
    path = _file(tmp_path, ["a", "b", "c", "target", "d", "e", "f"])
    patch = _hunk(1, [" X", " Y", " c", "-target", "+hit", " d", " E", " F"])
    result = apply_patch(tmp_path, patch)
    assert "hit\n" in path.read_text()
    assert result.files[0].match == "fuzz2"


def test_inner_context_differences_are_not_fuzzed_away(tmp_path: Path, hash_tree: HashTree):
    _file(tmp_path, ["a", "b", "c", "target", "d", "e", "f"])
    before = hash_tree(tmp_path)
    with pytest.raises(PatchError, match="were not found"):
        apply_patch(tmp_path, _hunk(1, [" a", " b", " WRONG", "-target", "+hit", " d", " e", " f"]))
    assert hash_tree(tmp_path) == before


def test_equally_distant_matches_are_refused_with_their_line_numbers(tmp_path: Path, hash_tree: HashTree):
    lines = ["u1", "dup", "value", "u2", "u3", "u4", "u5", "dup", "value", "u6"]
    _file(tmp_path, lines)
    before = hash_tree(tmp_path)
    with pytest.raises(PatchError, match=r"match equally well at lines 2, 8"):
        apply_patch(tmp_path, _hunk(5, [" dup", "-value", "+changed"]))
    assert hash_tree(tmp_path) == before


def test_the_nearer_of_two_matches_wins(tmp_path: Path):
    path = _file(tmp_path, ["dup", "value", "u1", "u2", "u3", "u4", "u5", "dup", "value"])
    apply_patch(tmp_path, _hunk(7, [" dup", "-value", "+changed"]))
    assert path.read_text().splitlines() == ["dup", "value", "u1", "u2", "u3", "u4", "u5", "dup", "changed"]


def test_hunk_without_line_numbers_that_matches_twice_is_refused(tmp_path: Path):
    _file(tmp_path, ["dup", "value", "other", "dup", "value"])
    patch = "--- a/f.txt\n+++ b/f.txt\n@@\n dup\n-value\n+changed\n"
    with pytest.raises(PatchError, match=r"lines 1, 4 \(exact match\)"):
        apply_patch(tmp_path, patch)


def test_codex_hunk_matching_twice_is_refused_with_a_hint_about_anchors(tmp_path: Path):
    _file(tmp_path, ["dup", "value", "other", "dup", "value"])
    patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n dup\n-value\n+changed\n*** End Patch\n"
    with pytest.raises(PatchError, match=r"(?s)lines 1, 4.*@@ <line>` anchor"):
        apply_patch(tmp_path, patch)


def test_exact_match_beats_a_whitespace_match_that_is_farther_away(tmp_path: Path):
    path = _file(tmp_path, ["a", "x", "y", "b", "c", "d", "x ", "y"])
    result = apply_patch(tmp_path, _hunk(1, [" x", "-y", "+Y"]))
    assert path.read_text() == "a\nx\nY\nb\nc\nd\nx \ny\n"
    assert (result.files[0].match, result.files[0].offset_lines) == ("offset", 1)


def test_exact_match_far_away_and_whitespace_match_nearby_is_refused(tmp_path: Path, hash_tree: HashTree):
    _file(tmp_path, ["x ", "y", "z", "x", "y"])
    before = hash_tree(tmp_path)
    with pytest.raises(PatchError, match=r"match at line 4, but also at line 1 \(trailing_ws match\), which is nearer"):
        apply_patch(tmp_path, _hunk(1, [" x", "-y", "+Y"]))
    assert hash_tree(tmp_path) == before


def test_hunk_that_matches_nowhere_is_refused(tmp_path: Path):
    _file(tmp_path, NUMBERS)
    with pytest.raises(PatchError, match="were not found"):
        apply_patch(tmp_path, _hunk(3, [" n3", "-nothing like this", "+x"]))


def test_context_lines_that_lost_their_space_prefix_do_not_push_the_added_lines_deeper(tmp_path: Path) -> None:
    # the model wrote `      - uses` for ` ` + `      - uses`: its context is one space short, its `+` line is right
    yml = "jobs:\n  test:\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n"
    (tmp_path / "ci.yml").write_text(yml)
    patch = (
        "*** Begin Patch\n*** Update File: ci.yml\n@@     steps:\n      - uses: actions/checkout@v4\n"
        "+      - uses: actions/setup-python@v5\n      - run: make test\n*** End Patch\n"
    )
    apply_patch(tmp_path, patch)
    assert (tmp_path / "ci.yml").read_text() == yml.replace(
        "checkout@v4\n", "checkout@v4\n      - uses: actions/setup-python@v5\n"
    )


def test_a_tab_indented_file_patched_with_spaces_gets_its_added_lines_in_tabs(tmp_path: Path) -> None:
    # a Makefile recipe must start with a tab: written with spaces, make says "missing separator"
    makefile = "all: app\n\napp: main.o\n\t$(CC) -o $@ $^\n\nclean:\n\trm -f *.o app\n"
    (tmp_path / "Makefile").write_text(makefile)
    patch = "--- a/Makefile\n+++ b/Makefile\n@@ -6,2 +6,3 @@\n clean:\n     rm -f *.o app\n+    rm -rf build/\n"
    result = apply_patch(tmp_path, patch)
    assert (tmp_path / "Makefile").read_text() == makefile + "\trm -rf build/\n"
    assert result.files[0].fuzzy  # whitespace was ignored to find it: the warning says so
    go = "package main\n\nfunc main() {\n\tif ok {\n\t\trun()\n\t}\n}\n"
    (tmp_path / "main.go").write_text(go)
    patch = '--- a/main.go\n+++ b/main.go\n@@ -4,3 +4,4 @@\n     if ok {\n         run()\n+        log("ran")\n     }\n'
    apply_patch(tmp_path, patch)
    assert (tmp_path / "main.go").read_text() == go.replace("\t\trun()\n", '\t\trun()\n\t\tlog("ran")\n')
