"""A file that is not UTF-8 (Latin-1, cp1252): a model reads its odd bytes as U+FFFD and can write no other thing
for them, so a hunk whose context or removed lines carry U+FFFD where the file has such bytes matches (the unicode
rung), and a refusal near such a line says how to write it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch

LATIN1 = "# caf\xe9 cr\xe8me\nprice = 1\ntotal = price\n".encode("latin-1")


def test_replacement_characters_match_the_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "menu.py").write_bytes(LATIN1)
    patch = "--- a/menu.py\n+++ b/menu.py\n@@ -1,3 +1,3 @@\n # caf\ufffd cr\ufffdme\n"
    patch += "-price = 1\n+price = 2\n total = price\n"
    result = apply_patch(tmp_path, patch)
    # The context line keeps the file's own bytes.
    assert (tmp_path / "menu.py").read_bytes() == LATIN1.replace(b"price = 1", b"price = 2")
    assert result.files[0].match == "unicode"
    assert result.warnings


def test_a_removed_line_with_odd_bytes_can_be_replaced(tmp_path: Path) -> None:
    (tmp_path / "menu.py").write_bytes(LATIN1)
    patch = "--- a/menu.py\n+++ b/menu.py\n@@ -1,2 +1,2 @@\n-# caf\ufffd cr\ufffdme\n+# cafe creme\n price = 1\n"
    apply_patch(tmp_path, patch)
    assert (tmp_path / "menu.py").read_bytes() == b"# cafe creme\nprice = 1\ntotal = price\n"


def test_a_run_of_odd_bytes_read_as_one_replacement_character_matches(tmp_path: Path) -> None:
    # b"\xe9\xa0" is the start of a 3-byte UTF-8 sequence cut short: a lossy decoder shows one U+FFFD for both.
    (tmp_path / "f.txt").write_bytes(b"a\xe9\xa0b\nx\n")
    result = apply_patch(tmp_path, "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\ufffdb\n-x\n+y\n")
    assert (tmp_path / "f.txt").read_bytes() == b"a\xe9\xa0b\ny\n"
    assert result.files[0].match == "unicode"


def test_a_refusal_near_odd_bytes_says_how_to_write_them(tmp_path: Path) -> None:
    (tmp_path / "menu.py").write_bytes(LATIN1)
    patch = "--- a/menu.py\n+++ b/menu.py\n@@ -1,2 +1,2 @@\n-# caf\xe9 cr\xe8me\n+# cafe creme\n price = 1\n"
    with pytest.raises(PatchError) as caught:
        apply_patch(tmp_path, patch)
    text = str(caught.value)
    assert "line 1 holds bytes that are not UTF-8" in text
    assert "U+FFFD" in text
    assert (tmp_path / "menu.py").read_bytes() == LATIN1
