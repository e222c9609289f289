"""The engine's shortcuts give what the full work gives: a path checked in one pass is normalised and refused
exactly as the part-by-part check does it, and a directory resolved from its parent is where realpath puts it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.patch import jail
from sandbox.patch.jail import Jail, PathRefused

PIECES = ["a", "b.py", ".", "..", "", "/", "//", ".git", ".GIT", ".gitignore", "~", "C:", "c:x", "\\", "\x00"]
ODD = ["\u0131", "\u0130", "\n", " ", "\ufb00", "\u212a"]  # letters whose case folds to ASCII, and blanks
paths = st.lists(st.sampled_from([*PIECES, "x", *ODD]), max_size=8).map("".join)


def outcome(check, path: str) -> object:
    try:
        return check(path)
    except PathRefused as exc:
        return ("refused", str(exc))


@settings(max_examples=3000, deadline=None)
@given(paths)
def test_a_path_checked_in_one_pass_is_normalised_or_refused_as_the_full_check_does(path: str) -> None:
    assert outcome(jail.normalize, path) == outcome(jail._normalize, path)


@pytest.mark.parametrize(
    "path", ["src/pkg/mod.py", "a/../b", "./a", "a//b", "a/", "/etc/passwd", "~/x", "C:/x", "x/.GIT/config", "..a/b.."]
)
def test_usual_and_unusual_paths_are_normalised_as_the_full_check_does(path: str) -> None:
    assert outcome(jail.normalize, path) == outcome(jail._normalize, path)


def test_directories_reached_through_links_resolve_where_realpath_puts_them(tmp_path: Path) -> None:
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "real" / "deep" / "f.txt").write_text("x\n")
    (tmp_path / "link").symlink_to("real")
    (tmp_path / "real" / "up").symlink_to("..")
    (tmp_path / "loop").symlink_to("loop")
    shared = Jail(tmp_path)  # remembers every directory it resolved
    heads = ["real", "real/deep", "link", "link/deep", "real/up/link/deep", "missing/x", "loop/x", "real/deep/f.txt/z"]
    for head in heads:
        expected = os.path.realpath(os.path.join(shared.root, head))
        assert shared._real(head) == expected
        assert Jail(tmp_path)._real(head) == expected
