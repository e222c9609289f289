"""What `apply_patch` returns: the contract's result models, plus a readable rendering for the tool's text."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

FileAction = Literal["modify", "add", "delete", "rename"]

#: The rungs of the matching ladder, from the strictest to the most lenient.
MatchLevel = Literal["exact", "offset", "trailing_ws", "surrounding_ws", "unicode", "fuzz1", "fuzz2"]
MATCH_LEVELS: tuple[MatchLevel, ...] = ("exact", "offset", "trailing_ws", "surrounding_ws", "unicode", "fuzz1", "fuzz2")
#: Levels at which the lines themselves matched exactly (only their position may have moved).
STRICT_LEVELS: frozenset[MatchLevel] = frozenset({"exact", "offset"})

#: Patches larger than this (in UTF-8 bytes) are refused.
MAX_PATCH_BYTES = 10 * 1024 * 1024


def _absent(value: object) -> bool:
    """A null optional field is left out of a file's entry: clients check every entry of a result against the
    output schema, and the two null fields of each cost the Python SDK's check a quarter of its time (262 files:
    9.8 -> 7.7 ms); the schema's default (null) says what an absent one means."""
    return value is None


class FileChange(BaseModel):
    """One file the patch changes (or would change, on a dry run)."""

    path: str
    """The file's path relative to the workspace root (the new path of a rename)."""
    action: FileAction
    hunks: int = Field(ge=0)
    """How many hunks were applied to the file."""
    offset_lines: int = 0
    """The largest distance, in lines, between where a hunk said it applies and where it was found (signed)."""
    fuzzy: bool = False
    """True when some hunk only matched after whitespace or punctuation was ignored, or with reduced context."""
    old_path: str | None = Field(default=None, exclude_if=_absent)
    """The path before a rename; left out of the dump when there is none."""
    match: MatchLevel = "exact"
    """The most lenient rung of the matching ladder that any hunk of this file needed."""
    mode: str | None = Field(default=None, exclude_if=_absent)
    """The file mode set by the patch (`100755`, `100644`), when it sets one; left out of the dump otherwise."""


class SyntaxIssue(BaseModel):
    """A Python syntax error in a file as the patch leaves it. Reported, not refused."""

    path: str
    line: int | None = None
    message: str


class PatchResult(BaseModel):
    """The outcome of a patch that was accepted: applied, or planned on a dry run."""

    applied: bool
    """True when the files were written; always False on a dry run."""
    dry_run: bool
    files: list[FileChange] = Field(default_factory=list)
    syntax_errors: list[SyntaxIssue] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    """Hunks that needed lenient matching, so the caller can check them."""

    def render(self) -> str:
        """A short human-readable summary, one line per file."""
        verb = "applied" if self.applied else "dry run, nothing written:" if self.dry_run else "not applied:"
        lines = [f"Patch {verb} {len(self.files)} file(s)."]
        for change in self.files:
            lines.append(f"  {change.action:<6} {_describe(change)}")
        for warning in self.warnings:
            lines.append(f"  note: {warning}")
        if self.syntax_errors:
            lines.append("Python syntax errors in the patched files:")
            for issue in self.syntax_errors:
                where = f"{issue.path}:{issue.line}" if issue.line is not None else issue.path
                lines.append(f"  {where}: {issue.message}")
        return "\n".join(lines)


def _describe(change: FileChange) -> str:
    name = f"{change.old_path} -> {change.path}" if change.old_path else change.path
    details = [f"{change.hunks} hunk(s)"] if change.hunks else []
    if change.offset_lines:
        details.append(f"offset {change.offset_lines:+d} lines")
    if change.fuzzy:
        details.append(f"fuzzy ({change.match})")
    if change.mode:
        details.append(f"mode {change.mode}")
    return f"{name} ({', '.join(details)})" if details else name
