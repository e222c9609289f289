"""A file's lines as the matching ladder and the anchor chains search them: each normalised form made once."""

from __future__ import annotations

from collections.abc import Callable

from sandbox.patch.models import MatchLevel


class Haystack:
    """A file's lines with their normalised forms, computed once per comparator."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._views: dict[MatchLevel, list[str]] = {"exact": lines}

    def view(self, level: MatchLevel, norm: Callable[[str], str] | None) -> list[str]:
        if level not in self._views:
            assert norm is not None
            self._views[level] = [norm(line) for line in self.lines]
        return self._views[level]

    def find_all(
        self, needle: list[str], level: MatchLevel, norm: Callable[[str], str] | None, lo: int, limit: int = 0
    ) -> list[int]:
        """Every start index >= lo where the needle's lines equal the file's lines under this comparator; only the
        first `limit` of them when `limit` is set."""
        view = self.view(level, norm)
        want = needle if norm is None else [norm(line) for line in needle]
        size, last = len(want), len(view) - len(want)
        first, found, pos = want[0], [], lo
        while pos <= last:
            try:
                pos = view.index(first, pos, last + 1)
            except ValueError:
                break
            if view[pos : pos + size] == want:
                found.append(pos)
                if limit and len(found) == limit:
                    break
            pos += 1
        return found

    def matches_at(self, needle: list[str], norm: Callable[[str], str] | None, pos: int) -> bool:
        """Whether the needle's lines equal the file's lines from index `pos` under this comparator."""
        window = self.lines[pos : pos + len(needle)]
        if norm is None:
            return window == needle
        return len(window) == len(needle) and all(norm(a) == norm(b) for a, b in zip(window, needle, strict=True))
