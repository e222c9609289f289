"""Reduced context (fuzz) never moves an edit into another function; it is refused with the closest location."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

HashTree = Callable[[Path], str]

ADD_MUL = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
ONLY_MUL_HAS_IT = (
    'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    """Product."""\n    value = a\n    return value * b\n'
)
BOTH_HAVE_IT = (
    'def add(a, b):\n    """Sum."""\n    value = a\n    return value * b\n\n\n'
    'def mul(a, b):\n    """Product."""\n    value = a\n    return value * b\n'
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "calc.py"
    path.write_text(text)
    return path


def _unified(header: str, body: list[str]) -> str:
    return "--- a/calc.py\n+++ b/calc.py\n" + header + "\n" + "".join(line + "\n" for line in body)


def test_hunk_whose_def_line_is_dropped_by_fuzz_is_refused_not_applied_in_another_function(
    tmp_path: Path, hash_tree: HashTree
):
    _write(tmp_path, ADD_MUL)
    before = hash_tree(tmp_path)
    patch = _unified("@@ -1,2 +1,2 @@", [" def add(a, b):", "-    return a * b", "+    return a - b"])
    with pytest.raises(PatchError) as caught:
        apply_patch(tmp_path, patch)
    text = str(caught.value)
    assert "only with reduced context, at line 6" in text
    assert "'def add(a, b):'" in text
    assert "! 5 | def mul(a, b):" in text  # the closest location, shown with its line numbers
    assert "  6 |     return a * b" in text
    assert hash_tree(tmp_path) == before


def test_fuzz_match_outside_the_function_the_header_names_is_refused(tmp_path: Path, hash_tree: HashTree):
    _write(tmp_path, ONLY_MUL_HAS_IT)
    before = hash_tree(tmp_path)
    body = ['     """Changed."""', "     value = a", "-    return value * b", "+    return value + b"]
    with pytest.raises(PatchError, match=r"not inside 'def add\(a, b\):', the function its header names"):
        apply_patch(tmp_path, _unified("@@ -6,3 +6,3 @@ def add(a, b):", body))
    assert hash_tree(tmp_path) == before


def test_header_function_context_picks_its_function_over_a_nearer_fuzz_match(tmp_path: Path):
    path = _write(tmp_path, BOTH_HAVE_IT)
    body = ['     """Changed."""', "     value = a", "-    return value * b", "+    return value + b"]
    result = apply_patch(tmp_path, _unified("@@ -8,3 +8,3 @@ def add(a, b):", body))
    lines = path.read_text().splitlines()
    assert lines[3] == "    return value + b"  # in add()
    assert lines[9] == "    return value * b"  # mul() untouched
    assert result.files[0].match == "fuzz1"


def test_codex_anchor_keeps_a_fuzz_match_in_the_anchored_function(tmp_path: Path, hash_tree: HashTree):
    _write(tmp_path, ONLY_MUL_HAS_IT)
    before = hash_tree(tmp_path)
    patch = (
        "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n"
        '     """Changed."""\n     value = a\n-    return value * b\n+    return value + b\n*** End Patch\n'
    )
    with pytest.raises(PatchError, match=r"not inside 'def add\(a, b\):'"):
        apply_patch(tmp_path, patch)
    assert hash_tree(tmp_path) == before


def test_fuzz_inside_the_same_function_still_applies(tmp_path: Path):
    path = _write(tmp_path, BOTH_HAVE_IT)
    body = ["     # a comment that is gone", "     value = a", "-    return value * b", "+    return value + b"]
    result = apply_patch(tmp_path, _unified("@@ -2,3 +2,3 @@ def add(a, b):", body))
    assert path.read_text().splitlines()[3] == "    return value + b"
    assert result.files[0].match == "fuzz1"


def test_a_dropped_def_line_that_is_in_place_does_not_block_fuzz(tmp_path: Path):
    path = _write(tmp_path, BOTH_HAVE_IT)
    body = [
        " def add(a, b):",
        '     """Sum, changed."""',
        "     value = a",
        "-    return value * b",
        "+    return value + b",
    ]
    result = apply_patch(tmp_path, _unified("@@ -1,4 +1,4 @@", body))
    assert path.read_text().splitlines()[3] == "    return value + b"
    assert result.files[0].match == "fuzz2"
