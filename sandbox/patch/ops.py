"""The parsed form of a patch, shared by both parsers and the planner. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from sandbox.errors import PatchError

LineOp = Literal[" ", "-", "+"]
FileKind = Literal["modify", "add", "delete", "rename", "copy"]
PatchFormat = Literal["unified", "codex"]


class MalformedPatch(PatchError):
    """The patch text could not be parsed; the message names the patch line and what to change."""

    def __init__(self, line: int | None, problem: str, fix: str) -> None:
        where = f"patch line {line}: " if line is not None else ""
        super().__init__(f"apply_patch refused, nothing was written.\n{where}{problem}\nHow to fix: {fix}")


class HunkLine(NamedTuple):
    op: LineOp
    text: str
    """The line without its prefix and line ending."""
    cr: bool = False
    """The patch line ended with CR LF."""


@dataclass
class Hunk:
    number: int
    """1-based position of the hunk within its file section."""
    patch_line: int
    """1-based line of the patch where the hunk starts (its `@@` line, or its first line)."""
    header: str
    lines: list[HunkLine]
    old_start: int | None = None
    """0-based index in the old file where the hunk's old lines begin; None when the hunk gave no line numbers."""
    old_eof_newline: bool | None = None
    """False when the old side ends with `\\ No newline at end of file`; None when the hunk says nothing."""
    new_eof_newline: bool | None = None
    anchors: list[str] = field(default_factory=list)
    """Codex `@@ <line>` hints: lines that precede the hunk, outermost first."""
    soft_anchors: bool = False
    """The anchors came from a unified hunk header without numbers (`@@ class B:`): when they lead nowhere they are
    ignored, and the hunk placed by its context alone."""
    at_eof: bool = False
    """Codex `*** End of File`: the hunk's old lines end the file."""
    eof_marks: list[int] | None = None
    """Where its `\\ No newline at end of file` markers stood: the number of hunk lines before each."""

    @property
    def old_lines(self) -> list[str]:
        return [line.text for line in self.lines if line.op != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [line.text for line in self.lines if line.op != "-"]

    def label(self) -> str:
        return f"hunk {self.number} ({self.header.strip() or '@@'}, patch line {self.patch_line})"


@dataclass
class PathChoice:
    """A path as written in the patch, with the ways of reading it (strip levels) in order of preference."""

    written: str
    candidates: list[str]

    @classmethod
    def exact(cls, path: str) -> PathChoice:
        return cls(path, [path])


@dataclass
class FilePatch:
    kind: FileKind
    path: PathChoice
    """The file the section reads: the file to modify or delete, the source of a rename or copy, the added file."""
    patch_line: int
    fmt: PatchFormat
    hunks: list[Hunk] = field(default_factory=list)
    new_path: PathChoice | None = None
    """The target of a rename or copy."""
    new_mode: str | None = None
    """`100644` or `100755` when the patch sets a mode."""
    check_content: bool = True
    """A unified-diff deletion must remove exactly the file's content; a Codex deletion carries none."""
    crlf_informative: bool = False
    """The patch mixes LF and CR LF lines, so each added line's ending is meant literally."""

    def label(self) -> str:
        return self.path.written
