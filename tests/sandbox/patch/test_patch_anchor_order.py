"""A chain of Codex `@@` anchors that leads nowhere names the anchor that breaks it, and says when that anchor is
in the file but above the one before it (anchors out of order, or naming the wrong class)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

SOURCE = "class A {\n  run() {\n    return 1;\n  }\n}\nclass B {\n  go() {\n    return 1;\n  }\n}\n"


def _refusal(tmp_path: Path, anchors: str) -> str:
    (tmp_path / "a.ts").write_text(SOURCE)
    patch = f"*** Begin Patch\n*** Update File: a.ts\n{anchors}-    return 1;\n+    return 2;\n*** End Patch\n"
    with pytest.raises(PatchError) as refused:
        apply_patch(tmp_path, patch)
    assert (tmp_path / "a.ts").read_text() == SOURCE
    return str(refused.value)


def test_an_anchor_found_only_above_the_anchor_before_it_is_reported_out_of_order(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "@@ class B {\n@@ run() {\n")
    expected = "the anchor `@@ run() {` is at line 2, but not after the anchor before it, `@@ class B {` (line 6)"
    assert expected in message
    assert "matches no line" not in message


def test_a_missing_first_anchor_is_the_one_named_not_the_last(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "@@ class C {\n@@ run() {\n")
    assert "the anchor `@@ class C {` matches no line of the file" in message
