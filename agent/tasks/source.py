"""A module's text with AST positions turned into string offsets (AST columns count UTF-8 bytes, not characters)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass
class Source:
    text: str
    _line_starts: list[int] = field(init=False, repr=False)
    _lines: list[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._lines = self.text.splitlines(keepends=True)
        self._line_starts = []
        offset = 0
        for line in self._lines:
            self._line_starts.append(offset)
            offset += len(line)
        self._line_starts.append(offset)

    def offset(self, lineno: int, col_bytes: int) -> int:
        """String offset of (1-based line, UTF-8 byte column)."""
        line = self._lines[lineno - 1] if lineno - 1 < len(self._lines) else ""
        col = len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return self._line_starts[lineno - 1] + col

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        return self.text[self.start(node) : self.end(node)]

    def line_of(self, offset: int) -> int:
        """1-based line number of a string offset."""
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1
