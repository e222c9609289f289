"""Codex envelope scenarios, modelled on the kinds of fixture Codex publishes (written for this project)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

HashTree = Callable[[Path], str]


def envelope(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def test_add_file_creates_it_with_a_final_newline(tmp_path: Path):
    result = apply_patch(tmp_path, envelope("*** Add File: pkg/hello.py", "+print('hi')", "+", "+x = 1"))
    assert (tmp_path / "pkg" / "hello.py").read_text() == "print('hi')\n\nx = 1\n"
    assert result.files[0].action == "add"
    assert result.files[0].path == "pkg/hello.py"


def test_delete_file_removes_it(tmp_path: Path):
    (tmp_path / "old.txt").write_text("whatever\n")
    result = apply_patch(tmp_path, envelope("*** Delete File: old.txt"))
    assert not (tmp_path / "old.txt").exists()
    assert result.files[0].action == "delete"


def test_update_file_replaces_the_matched_lines(tmp_path: Path):
    (tmp_path / "app.py").write_text("def greet():\n    print('Hi')\n    return None\n")
    apply_patch(
        tmp_path, envelope("*** Update File: app.py", "@@", " def greet():", "-    print('Hi')", "+    print('Hello')")
    )
    assert (tmp_path / "app.py").read_text() == "def greet():\n    print('Hello')\n    return None\n"


def test_move_with_a_change_renames_the_file(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\nb = 2\n")
    patch = envelope("*** Update File: src/app.py", "*** Move to: src/main.py", "@@", " a = 1", "-b = 2", "+b = 3")
    result = apply_patch(tmp_path, patch)
    assert not (tmp_path / "src" / "app.py").exists()
    assert (tmp_path / "src" / "main.py").read_text() == "a = 1\nb = 3\n"
    assert (result.files[0].action, result.files[0].old_path) == ("rename", "src/app.py")


def test_move_without_hunks_only_renames(tmp_path: Path):
    (tmp_path / "a.txt").write_text("same\n")
    apply_patch(tmp_path, envelope("*** Update File: a.txt", "*** Move to: b.txt"))
    assert (tmp_path / "b.txt").read_text() == "same\n"
    assert not (tmp_path / "a.txt").exists()


def test_multiple_chunks_in_one_file_apply_in_order(tmp_path: Path):
    lines = [f"line {i}" for i in range(1, 21)]
    (tmp_path / "f.txt").write_text("\n".join(lines) + "\n")
    patch = envelope(
        "*** Update File: f.txt",
        "@@",
        " line 2",
        "-line 3",
        "+line three",
        " line 4",
        "@@",
        " line 15",
        "-line 16",
        "+line sixteen",
    )
    apply_patch(tmp_path, patch)
    text = (tmp_path / "f.txt").read_text()
    assert "line three\n" in text
    assert "line sixteen\n" in text
    assert "line 3\n" not in text


def test_end_of_file_marker_matches_the_last_lines(tmp_path: Path):
    (tmp_path / "f.txt").write_text("end\nmiddle\nend\n")
    apply_patch(tmp_path, envelope("*** Update File: f.txt", "@@", "-end", "+END", "*** End of File"))
    assert (tmp_path / "f.txt").read_text() == "end\nmiddle\nEND\n"


def test_pure_addition_chunk_appends_at_the_end(tmp_path: Path):
    (tmp_path / "f.txt").write_text("a\nb\n")
    apply_patch(tmp_path, envelope("*** Update File: f.txt", "@@", "+c", "+d"))
    assert (tmp_path / "f.txt").read_text() == "a\nb\nc\nd\n"


def test_anchor_picks_the_function_among_identical_bodies(tmp_path: Path):
    source = "class A:\n    def run(self):\n        return 0\n\n\nclass B:\n    def run(self):\n        return 0\n"
    (tmp_path / "m.py").write_text(source)
    patch = envelope(
        "*** Update File: m.py", "@@ class B:", "@@     def run(self):", "-        return 0", "+        return 1"
    )
    apply_patch(tmp_path, patch)
    assert (tmp_path / "m.py").read_text() == source[: source.rindex("0")] + "1\n"


def test_anchor_may_be_the_beginning_of_a_line(tmp_path: Path):
    (tmp_path / "m.py").write_text("def f(a, b):\n    return a\n\ndef g(a, b):\n    return a\n")
    apply_patch(tmp_path, envelope("*** Update File: m.py", "@@ def g", "-    return a", "+    return b"))
    assert (tmp_path / "m.py").read_text().endswith("def g(a, b):\n    return b\n")


def test_several_operations_in_one_patch_apply_together(tmp_path: Path):
    (tmp_path / "keep.txt").write_text("1\n2\n")
    (tmp_path / "drop.txt").write_text("x\n")
    patch = envelope(
        "*** Add File: new.txt",
        "+fresh",
        "",
        "*** Update File: keep.txt",
        "@@",
        "-2",
        "+two",
        "",
        "*** Delete File: drop.txt",
    )
    result = apply_patch(tmp_path, patch)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "new.txt"]
    assert (tmp_path / "keep.txt").read_text() == "1\ntwo\n"
    assert [c.action for c in result.files] == ["add", "modify", "delete"]


@pytest.mark.parametrize(
    "opener", ["apply_patch <<'EOF'", 'apply_patch <<"EOF"', "apply_patch <<EOF", "applypatch << EOF"]
)
def test_heredoc_wrapper_is_accepted(tmp_path: Path, opener: str):
    (tmp_path / "f.txt").write_text("a\n")
    patch = opener + "\n" + envelope("*** Update File: f.txt", "@@", "-a", "+b") + "EOF\n"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "f.txt").read_text() == "b\n"


def test_unicode_punctuation_in_context_is_folded(tmp_path: Path):
    (tmp_path / "doc.txt").write_text("Title \u2014 with dash\nvalue = \u201cquoted\u201d\n")
    result = apply_patch(
        tmp_path, envelope("*** Update File: doc.txt", "@@", " Title - with dash", '-value = "quoted"', "+value = 1")
    )
    assert (tmp_path / "doc.txt").read_text() == "Title \u2014 with dash\nvalue = 1\n"
    assert result.files[0].match == "unicode"
    assert result.files[0].fuzzy


def test_crlf_file_updated_through_the_envelope_stays_crlf(tmp_path: Path):
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    apply_patch(tmp_path, envelope("*** Update File: w.txt", "@@", " one", "-two", "+2", "+3"))
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\n2\r\n3\r\n"


def test_cut_off_envelope_is_refused(tmp_path: Path, hash_tree: HashTree):
    (tmp_path / "f.txt").write_text("a\n")
    before = hash_tree(tmp_path)
    with pytest.raises(PatchError, match="without `\\*\\*\\* End Patch`"):
        apply_patch(tmp_path, "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+b\n")
    assert hash_tree(tmp_path) == before


def test_line_without_a_prefix_is_refused_with_its_patch_line(tmp_path: Path):
    (tmp_path / "f.txt").write_text("a\n")
    with pytest.raises(PatchError, match=r"patch line 4: unexpected line 'oops'"):
        apply_patch(tmp_path, envelope("*** Update File: f.txt", "@@", "oops", "-a", "+b"))


def test_added_file_line_without_plus_is_refused(tmp_path: Path):
    with pytest.raises(PatchError, match="does not start with '\\+'"):
        apply_patch(tmp_path, envelope("*** Add File: n.txt", "+ok", "missing plus"))


def test_update_of_a_missing_file_is_refused(tmp_path: Path):
    with pytest.raises(PatchError, match=r"(?s)nope\.txt: the file does not exist.*Add File"):
        apply_patch(tmp_path, envelope("*** Update File: nope.txt", "@@", "-a", "+b"))


def test_move_onto_an_existing_file_is_refused_and_nothing_changes(tmp_path: Path, hash_tree: HashTree):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    before = hash_tree(tmp_path)
    with pytest.raises(PatchError, match=r"b\.txt: the patch moves or copies a file here"):
        apply_patch(tmp_path, envelope("*** Add File: c.txt", "+c", "*** Update File: a.txt", "*** Move to: b.txt"))
    assert hash_tree(tmp_path) == before


def test_failing_second_file_leaves_the_first_unwritten(tmp_path: Path, hash_tree: HashTree):
    (tmp_path / "one.txt").write_text("1\n")
    (tmp_path / "two.txt").write_text("2\n")
    before = hash_tree(tmp_path)
    patch = envelope("*** Update File: one.txt", "@@", "-1", "+one", "*** Update File: two.txt", "@@", "-3", "+three")
    with pytest.raises(PatchError, match=r"(?s)two.txt, hunk 1 of 1.*would have applied: one.txt: all 1 hunk"):
        apply_patch(tmp_path, patch)
    assert hash_tree(tmp_path) == before


def test_text_after_end_patch_is_refused(tmp_path: Path):
    with pytest.raises(PatchError, match="unexpected text after"):
        apply_patch(tmp_path, envelope("*** Add File: a.txt", "+a") + "and some prose\n")


def test_unified_hunk_header_inside_the_envelope_is_a_position_hint(tmp_path: Path):
    (tmp_path / "f.txt").write_text("x\ny\nz\nx\ny\n")
    result = apply_patch(tmp_path, envelope("*** Update File: f.txt", "@@ -4,2 +4,2 @@", " x", "-y", "+Y"))
    assert (tmp_path / "f.txt").read_text() == "x\ny\nz\nx\nY\n"
    assert result.files[0].offset_lines == 0


THREE_RETURNS = (
    "def a(cond):\n    if cond:\n        return 1\n    return 0\n\n\n"
    "def b(cond):\n    if cond:\n        return 1\n    log()\n    return 0\n\n\n"
    "def c(cond):\n    if cond:\n        return 1\n\n    return 2\n"
)


def test_a_blank_line_between_two_chunks_separates_them_and_is_not_context(tmp_path: Path):
    # read as an empty context line, the blank made chunk 1 match only in c(), where an empty line follows
    (tmp_path / "m.py").write_text(THREE_RETURNS)
    patch = envelope(
        "*** Update File: m.py", "@@ def b(cond):", "-        return 1", "+        return 10", "",
        "@@ def c(cond):", "-    return 2", "+    return 20",
    )  # fmt: skip
    result = apply_patch(tmp_path, patch)
    expected = THREE_RETURNS.replace("        return 1\n    log()", "        return 10\n    log()")
    assert (tmp_path / "m.py").read_text() == expected.replace("    return 2\n", "    return 20\n")
    assert (result.files[0].match, result.warnings) == ("exact", [])


def test_a_line_of_one_space_before_the_next_chunk_is_still_an_empty_context_line(tmp_path: Path):
    (tmp_path / "m.py").write_text(THREE_RETURNS)
    patch = envelope(
        "*** Update File: m.py", "@@ def c(cond):", "-        return 1", "+        return 11", " ",
        "@@", "-    return 2", "+    return 22",
    )  # fmt: skip
    apply_patch(tmp_path, patch)
    assert (tmp_path / "m.py").read_text() == THREE_RETURNS.replace(
        "        return 1\n\n    return 2\n", "        return 11\n\n    return 22\n"
    )
