"""Plan a whole patch in memory: every section against the overlay, every problem collected, nothing written."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sandbox.errors import PatchError
from sandbox.patch.feedback import Problem, Refusal, applied_summary
from sandbox.patch.hunks import FileOutcome, apply_hunks
from sandbox.patch.jail import Jail, check_creatable
from sandbox.patch.missing import missing_file, same_name
from sandbox.patch.models import MATCH_LEVELS, STRICT_LEVELS, FileAction, FileChange, MatchLevel
from sandbox.patch.ops import FilePatch
from sandbox.patch.overlay import DEFAULT_MODE, Entry, Overlay
from sandbox.patch.textfile import TextFile
from sandbox.patch.write import WriteOp

_MODES = {"100644": False, "100755": True}
_EXISTS = "the patch moves or copies a file here but this file exists"


class _Skip(Exception):
    """A section could not be planned; its problem was recorded."""


@dataclass
class Plan:
    changes: list[FileChange] = field(default_factory=list)
    ops: list[WriteOp] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    """The files the patch touches, in their planned state."""


class Planner:
    def __init__(
        self, jail: Jail, on_planned: Callable[[Entry], None] | None = None, *, python_first: bool = False
    ) -> None:
        """`on_planned` sees each file as soon as a section has planned it (the syntax worker starts on it then).
        With `python_first` the sections naming a `.py` file are planned first (see `run`)."""
        self.jail = jail
        self.on_planned = on_planned
        self.python_first = python_first
        self._reset()

    def _reset(self) -> None:
        self.overlay = Overlay(self.jail)
        self.refusal = Refusal()
        self.plan = Plan()
        self.positions: tuple[list[int], list[int]] = ([], [])
        """The section of each change and of each warning, to list them in patch order."""
        self.listed: dict[str, int] = {}
        """Each file's entry in `plan.changes`."""
        self.filled: list[Entry] = []
        """Existing files that a git rename or copy moved content onto (see `Entry.filled`)."""

    def run(self, sections: Iterable[FilePatch]) -> Plan:
        """Plan every section. `sections` may be parsed as they are planned: a parse error still wins over an
        error that planning raised (a path refused, a workspace gone), which waits until the parse is done.

        With `python_first`, the sections that name a `.py` file are planned as they are parsed and the others
        once the parse is done, so the syntax worker starts sooner (diffs list files by path: a release diff's
        first `.py` file follows its docs and config). The plan is the one patch order gives: files, changes
        and warnings are listed in patch order, and when a file is looked up by sections of both kinds, or
        any section is refused or raises, the patch is planned again in patch order."""
        if not self.python_first:
            return self._in_order(sections)
        seen: list[FilePatch] = []
        later: list[int] = []
        clean = True
        for section in sections:
            seen.append(section)
            if not clean:
                continue
            if _names_python(section):
                clean = self._planned(section, len(seen) - 1, python=True)
            else:
                later.append(len(seen) - 1)
        for index in later:
            clean = clean and self._planned(seen[index], index, python=False)
        if clean and not self.overlay.mixed and not self._still_there():
            return self._finish()
        self._reset()
        return self._in_order(seen)

    def _planned(self, section: FilePatch, index: int, *, python: bool) -> bool:
        """Plan one section out of patch order; False when it was refused or raised (then all is planned again)."""
        self.overlay.section, self.overlay.python = index, python
        try:
            self.section(section)
        except Exception:  # _Skip too: the refusal lists its problems in patch order
            return False
        return not self.refusal.problems

    def _in_order(self, sections: Iterable[FilePatch]) -> Plan:
        raised: Exception | None = None
        for index, section in enumerate(sections):
            if raised is not None:
                continue
            self.overlay.section = index
            try:
                self.section(section)
            except _Skip:
                continue
            except Exception as exc:
                raised = exc
        if raised is not None:
            raise raised
        for entry in self._still_there():
            self.refusal.problems.append(
                Problem(entry.rel, _EXISTS + " and the patch does not move it away", "pick a new path")
            )
        if self.refusal.problems:
            raise PatchError(self.refusal.render())
        return self._finish()

    def _finish(self) -> Plan:
        changes, warnings = self.positions
        self.plan.changes = [c for _, c in sorted(zip(changes, self.plan.changes, strict=True), key=_first)]
        self.plan.warnings = [w for _, w in sorted(zip(warnings, self.plan.warnings, strict=True), key=_first)]
        self.plan.entries = self.overlay.changed()
        self.plan.ops = [op for op in (e.write_op() for e in self.plan.entries) if op is not None]
        return self.plan

    def _still_there(self) -> list[Entry]:
        """The files a git rename or copy moved content onto whose own content no section moved away."""
        return [entry for entry in self.filled if not entry.vacated]

    def fail(self, path: str, message: str, fix: str) -> _Skip:
        self.refusal.problems.append(Problem(path, message, fix))
        return _Skip()

    def section(self, section: FilePatch) -> None:
        if section.kind == "add":
            self.add(section)
            return
        if _reads_preimage(section):
            self.move_preimage(section)
            return
        source = self.overlay.existing(section.path)
        if source is None and _creates_from_nothing(section):
            self.add(section)
            return
        if source is None:
            self.refusal.problems.append(missing_file(section, self.jail, self.overlay))
            raise _Skip()
        if source.binary:
            raise self.fail(source.rel, "this is a binary file", "apply_patch changes text files only")
        assert source.text is not None
        outcome = self.hunks(section, source, source.text)
        if section.kind == "delete":
            self.delete(section, source, outcome)
            return
        if section.kind in ("rename", "copy"):
            self.move(section, source, outcome)
            return
        source.record(outcome.text, outcome.changed)
        source.mode = _mode(section, source.mode)
        self.record(section, source, "modify", outcome, source.mode)

    def hunks(self, section: FilePatch, entry: Entry, text: TextFile) -> FileOutcome:
        self.check_mode(section, entry.rel)
        outcome = apply_hunks(text, section.hunks, informative=section.crlf_informative)
        summary = applied_summary(entry.rel, outcome.results, len(section.hunks))
        if outcome.failed:
            self.refusal.problems.append(Problem(entry.rel, "", section=section, outcome=outcome))
            if summary:
                self.refusal.applied.append(summary)
            raise _Skip()
        if summary:
            self.refusal.applied.append(summary)
        return outcome

    def check_mode(self, section: FilePatch, rel: str) -> None:
        if section.new_mode is not None and section.new_mode not in _MODES:
            raise self.fail(
                rel,
                f"mode {section.new_mode} would make a symbolic link, submodule or directory",
                "apply_patch creates regular files only (modes 100644 and 100755)",
            )

    def move_preimage(self, section: FilePatch) -> None:
        """A git rename or copy: its source is the file as it was before the patch, whatever the sections before
        it did to it (git patches do not depend on the order of their sections)."""
        source = self.overlay.preimage(section.path)
        if source is None:
            raise self.fail(
                section.label(),
                f"the file to {section.kind} does not exist (patch line {section.patch_line})",
                f"check the `rename from` / `copy from` path against the workspace{same_name(self.jail, section)}",
            )
        if source.binary or source.original is None:
            raise self.fail(source.rel, "this is a binary file", "apply_patch changes text files only")
        if section.kind == "rename" and source.touched and source.text is not None and not source.filled:
            # One diff never both changes a file and renames it away; a series of commits (`git format-patch` of
            # several) can, and the rename would move the file as it was before the patch, losing the change.
            raise self.fail(
                source.rel,
                f"an earlier section changed this file and this one renames it away (patch line {section.patch_line}):"
                " a rename moves the file as it was before the patch, so that change would be lost",
                "send one diff of the end result, or the commits of a series one patch at a time",
            )
        outcome = self.hunks(section, source, source.original)
        self.move(section, source, outcome, preimage=True)

    def add(self, section: FilePatch) -> None:
        entry = self.overlay.new(section.path)
        if entry.exists:
            added = [line.text for hunk in section.hunks for line in hunk.lines if line.op == "+"]
            if entry.text is not None and entry.text.lines == added:  # the same patch sent again
                self.refusal.problems.append(
                    Problem(
                        entry.rel,
                        f"the patch creates this file but it already exists, with the content this patch gives it "
                        f"(patch line {section.patch_line}): it looks made already",
                        "leave this file out of the patch",
                        made_already=True,
                    )
                )
                raise _Skip()
            raise self.fail(
                entry.rel,
                f"the patch creates this file but it already exists (patch line {section.patch_line})",
                "change it with a modifying hunk (`--- a/path` or `*** Update File:`), or delete it first",
            )
        self.check_new_path(entry)
        if any(h.old_lines for h in section.hunks):
            raise self.fail(entry.rel, "a new file's hunks must only add lines", "prefix every line with '+'")
        outcome = self.hunks(section, entry, TextFile())
        entry.text = outcome.text
        entry.mode = _mode(section, DEFAULT_MODE)
        entry.touched = True
        self.overlay.created(entry.rel)
        self.record(section, entry, "add", outcome, entry.mode)

    def delete(self, section: FilePatch, entry: Entry, outcome: FileOutcome) -> None:
        left = len(outcome.text.lines) if outcome.text is not None else 0
        if section.check_content and left:
            raise self.fail(
                entry.rel,
                f"the patch deletes this file but {left} of its {len(outcome.original.lines)} lines are not removed",
                "re-read the file and remove every line, or modify it instead of deleting it",
            )
        entry.text = None
        entry.touched = True
        self.record(section, entry, "delete", outcome, None)

    def check_new_path(self, entry: Entry) -> None:
        """A file the patch creates needs a directory to go in: none on disk may be a file, and no file the
        patch creates may lie above or below it."""
        check_creatable(self.overlay.jail, entry.path, entry.rel)
        clash = self.overlay.created_clash(entry.rel)
        if clash is not None:
            raise self.fail(
                entry.rel,
                f"the patch also creates {clash}: one path cannot be both a file and a directory",
                "rename one of the two files",
            )

    def move(self, section: FilePatch, source: Entry, outcome: FileOutcome, *, preimage: bool = False) -> None:
        assert section.new_path is not None
        target = self.overlay.new(section.new_path)
        if target.path == source.path:
            source.record(outcome.text, outcome.changed)
            source.mode = _mode(section, source.mode)
            self.record(section, source, "modify", outcome, source.mode)
            return
        if target.exists:
            if not (preimage and _may_be_vacated(target)):
                raise self.fail(target.rel, _EXISTS, "pick a new path")
            # A git patch's sections do not depend on their order: a later section may still move this file's own
            # content away (a swap, a rotation), as `git apply` allows. Checked once every section is planned.
            target.filled = True
            self.filled.append(target)
        else:
            self.check_new_path(target)
        target.text = outcome.text
        # The lines a section before this one wrote into the source are unknown here (checked whole); so is a file
        # that becomes Python by its new name: nothing said its other blocks compile (a new file is checked whole).
        python_before = source.rel.endswith(".py")
        target.changed = list(outcome.changed) if python_before and (preimage or not source.touched) else None
        base_mode = source.disk_mode if preimage else source.mode
        target.mode = _mode(section, base_mode or DEFAULT_MODE)
        target.touched = True
        self.overlay.created(target.rel)
        action: FileAction = "add"
        if section.kind == "rename":
            if not (preimage and source.filled):  # content moved in by an earlier section stays
                source.text = None
            source.vacated = preimage or not source.filled
            source.touched = True
            action = "rename"
        self.record(section, target, action, outcome, target.mode, old_path=source.rel)

    def record(
        self,
        section: FilePatch,
        entry: Entry,
        action: FileAction,
        outcome: FileOutcome,
        mode: int | None,
        old_path: str | None = None,
    ) -> None:
        rel = entry.rel
        if self.on_planned is not None:
            self.on_planned(entry)
        matches = [(r.hunk.number, r.match) for r in outcome.results if r.match is not None]
        levels: list[MatchLevel] = [m.level for _, m in matches] or ["exact"]
        weakest = max(levels, key=MATCH_LEVELS.index)
        offset = max((m.offset for _, m in matches), key=abs, default=0)
        for number, match in matches:
            if match.level not in STRICT_LEVELS:
                dropped = match.trim_front + match.trim_back
                note = f", {dropped} outer context line(s) ignored" if dropped else ""
                self.plan.warnings.append(
                    f"{rel} hunk {number}: matched at line {match.start + 1} with {match.level}{note}; check the result"
                )
                self.positions[1].append(self.overlay.section)
        shown_mode = None
        if section.new_mode is not None and mode is not None:
            shown_mode = section.new_mode
        change = FileChange(
            path=rel,
            action=action,
            hunks=len(matches),
            offset_lines=offset,
            fuzzy=weakest not in STRICT_LEVELS,
            old_path=old_path,
            match=weakest,
            mode=shown_mode,
        )
        earlier = self.listed.get(rel)
        if earlier is not None:  # a second section over the same file: one entry for the file
            self.plan.changes[earlier] = _combined(self.plan.changes[earlier], change)
            return
        self.listed[rel] = len(self.plan.changes)
        self.positions[0].append(self.overlay.section)
        self.plan.changes.append(change)


def _combined(first: FileChange, then: FileChange) -> FileChange:
    """One entry for a file that two sections changed: what the patch did to it as a whole (created, deleted,
    renamed or modified) and every hunk applied to it."""
    action = first.action
    if then.action == "delete":
        action = "delete"
    elif first.action == "delete":  # deleted, then created again
        action = "modify"
    match = max(first.match, then.match, key=MATCH_LEVELS.index)
    return FileChange(
        path=first.path,
        action=action,
        hunks=first.hunks + then.hunks,
        offset_lines=max(first.offset_lines, then.offset_lines, key=abs),
        fuzzy=first.fuzzy or then.fuzzy,
        old_path=first.old_path or then.old_path,
        match=match,
        mode=then.mode or first.mode,
    )


def _first(pair: tuple[int, object]) -> int:
    return pair[0]


def _names_python(section: FilePatch) -> bool:
    names = section.path.candidates + (section.new_path.candidates if section.new_path is not None else [])
    return any(name.endswith(".py") for name in names)


def _may_be_vacated(target: Entry) -> bool:
    """A text file on disk that no section has changed yet: a later git rename may still move it away."""
    return not target.touched and target.text is not None and target.disk_bytes is not None


def _reads_preimage(section: FilePatch) -> bool:
    """A git rename or copy section (a Codex move applies in sequence, to the file as the patch left it)."""
    return section.fmt == "unified" and section.kind in ("rename", "copy")


def _creates_from_nothing(section: FilePatch) -> bool:
    """A unified-diff modification of a missing file whose hunks only add lines at the top creates it (as GNU
    patch does), even without a `/dev/null` header."""
    return (
        section.kind == "modify"
        and section.fmt == "unified"
        and bool(section.hunks)
        and all(not h.old_lines and h.old_start == 0 for h in section.hunks)
    )


def _mode(section: FilePatch, current: int | None) -> int:
    base = current if current is not None else DEFAULT_MODE
    if section.new_mode is None:
        return base
    if _MODES[section.new_mode]:
        return base | ((base & 0o444) >> 2)
    return base & ~0o111
