"""What a fix changed, read from its diffs: which files, where (function or class), and what kind of change.

The kinds are coarse and recognisable: an import added or corrected, a misspelt name renamed, a None guard, an
exception handled, a default supplied, a missing `await`, a type conversion, a boundary moved by one, a
signature, condition or return value changed, a dependency declared, a file added or removed. They become the
strategy and the tags of a distilled skill.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from sandbox.errors import PatchError
from skills_store.distill.episodes import Edit

DEPENDENCY_FILES = frozenset(
    {"requirements.txt", "pyproject.toml", "setup.cfg", "setup.py", "package.json", "go.mod", "Cargo.toml", "Pipfile"}
)
EXCERPT_LINES = 24
LINE_CHARS = 200

_IMPORT_RE = re.compile(r"^\s*(?:import\s+[\w.]+|from\s+[\w.]+\s+import\s+.+)")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|func|fn)\s+([A-Za-z_]\w*)")
_HUNK_CONTEXT_RE = re.compile(r"^@@[^@]*@@\s*(.*)$")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*|\d+|\S")
_CONDITION_RE = re.compile(r"^\s*(?:if|elif|while|assert)\b")
_CONVERSIONS = ("int(", "str(", "float(", "bool(", "list(", "dict(", "tuple(", "bytes(", ".decode(", ".encode(")


@dataclass
class FileDelta:
    path: str
    action: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    """Functions or classes the hunks are in (from hunk headers and the changed lines)."""
    pairs: list[tuple[str, str]] = field(default_factory=list)
    """(removed, added) lines that replaced each other, in order."""
    blocks: list[tuple[list[str], list[str]]] = field(default_factory=list)
    """Each run of removed lines with the run of added lines that replaced it (either may be empty)."""


@dataclass
class ChangeSummary:
    files: list[FileDelta]
    kinds: list[str]
    """Change kinds, most telling first (see `KIND_PHRASES`)."""
    details: list[str]
    """One sentence per notable change (`rename \\`itemz\\` to \\`items\\``)."""
    excerpt: str
    """The changed lines of the diffs, capped at `EXCERPT_LINES` lines."""

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]


KIND_PHRASES: dict[str, str] = {
    "declare-dependency": "declare the missing dependency",
    "add-import": "add the missing import",
    "fix-import": "correct the import",
    "rename": "fix a misspelt or wrong name",
    "none-guard": "guard against None",
    "handle-exception": "handle the exception",
    "default-value": "supply a default for a missing value",
    "add-await": "await the coroutine",
    "convert-type": "convert the value to the expected type",
    "off-by-one": "move a boundary by one",
    "change-signature": "change a function's signature",
    "change-condition": "change a condition",
    "change-return": "change the returned value",
    "add-file": "add a missing file",
    "delete-file": "remove a file",
    "rename-file": "rename a file",
    "add-code": "add the missing code",
    "remove-code": "remove the offending code",
    "edit-code": "edit the code",
}


def _parsed(edit: Edit) -> list[FileDelta] | None:
    from sandbox.patch.parse import parse_patch

    try:
        sections = parse_patch(edit.diff)
    except PatchError:
        return None
    out = []
    for section in sections:
        target = section.new_path or section.path
        delta = FileDelta(target.candidates[0], section.kind)
        for hunk in section.hunks:
            context = _HUNK_CONTEXT_RE.match(hunk.header.strip())
            if context and context.group(1):
                _add_place(delta, context.group(1))
            _add_lines(delta, [(line.op, line.text) for line in hunk.lines])
        out.append(delta)
    return out


def _lines_only(edit: Edit) -> list[FileDelta]:
    """Fallback for text the patch parser refuses (a truncated patch): read the +/- lines as they are."""
    deltas: list[FileDelta] = []
    current: FileDelta | None = None
    ops: list[tuple[str, str]] = []
    for line in edit.diff.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip().split("\t")[0]
            path = path[2:] if path.startswith(("a/", "b/")) else path
            if current is not None:
                _add_lines(current, ops)
            current, ops = FileDelta(path, "modify"), []
            deltas.append(current)
        elif line.startswith(("--- ", "diff ", "index ")):
            continue
        elif line[:1] in ("+", "-", " "):
            ops.append((line[0], line[1:]))
        elif line.startswith("@@"):
            context = _HUNK_CONTEXT_RE.match(line)
            if current is not None and context and context.group(1):
                _add_place(current, context.group(1))
    if current is None:
        current = FileDelta(edit.files[0] if edit.files else "?", "modify")
        deltas.append(current)
    _add_lines(current, ops)
    return deltas


def _add_place(delta: FileDelta, line: str) -> None:
    match = _DEF_RE.match(line)
    if match and match.group(1) not in delta.places:
        delta.places.append(match.group(1))


def _add_lines(delta: FileDelta, ops: list[tuple[str, str]]) -> None:
    removed_run: list[str] = []
    added_run: list[str] = []

    def pair_up() -> None:
        delta.pairs.extend(zip(removed_run, added_run, strict=False))
        if removed_run or added_run:
            delta.blocks.append((list(removed_run), list(added_run)))
        removed_run.clear()
        added_run.clear()

    for op, text in ops:
        if op == "-":
            if added_run:
                pair_up()
            removed_run.append(text)
            delta.removed.append(text)
        elif op == "+":
            added_run.append(text)
            delta.added.append(text)
        else:
            pair_up()
        if op in ("-", " "):
            _add_place(delta, text)
    pair_up()


def _renamed(old: str, new: str) -> tuple[str, str] | None:
    """(a, b) when `new` is `old` with one identifier `a` replaced by `b` (everywhere on the line)."""
    a, b = _IDENT_RE.findall(old), _IDENT_RE.findall(new)
    if len(a) != len(b):
        return None
    diffs = {(x, y) for x, y in zip(a, b, strict=True) if x != y}
    if len(diffs) != 1:
        return None
    x, y = next(iter(diffs))
    return (x, y) if x[0].isalpha() or x[0] == "_" else None


def _kinds(files: list[FileDelta]) -> tuple[list[str], list[str]]:
    kinds: list[str] = []
    details: list[str] = []

    def add(kind: str, detail: str | None = None) -> None:
        if kind not in kinds:
            kinds.append(kind)
        if detail and detail not in details:
            details.append(detail)

    for f in files:
        name = PurePosixPath(f.path).name
        if name in DEPENDENCY_FILES:
            added = [line.strip() for line in f.added if line.strip()]
            add("declare-dependency", f"declare `{added[0]}` in `{f.path}`" if added else None)
        if f.action in ("add", "delete", "rename"):
            add(f"{f.action}-file", f"{f.action} `{f.path}`")
        removed_set, added_set = {r.strip() for r in f.removed}, {a.strip() for a in f.added}
        new_imports = [a.strip() for a in f.added if _IMPORT_RE.match(a) and a.strip() not in removed_set]
        old_imports = [r.strip() for r in f.removed if _IMPORT_RE.match(r) and r.strip() not in added_set]
        if new_imports and old_imports:
            add("fix-import", f"replace `{old_imports[0]}` with `{new_imports[0]}` in `{f.path}`")
        elif new_imports:
            add("add-import", f"add `{new_imports[0]}` to `{f.path}`")
        for old, new in f.pairs:
            if _IMPORT_RE.match(old) or _IMPORT_RE.match(new):
                continue
            renamed = _renamed(old, new)
            if renamed and renamed[0].isidentifier() and renamed[1].isidentifier():
                add("rename", f"rename `{renamed[0]}` to `{renamed[1]}` in `{f.path}`")
            elif _DEF_RE.match(old) and _DEF_RE.match(new):
                add("change-signature", f"change `{old.strip()}` to `{new.strip()}`")
            elif _off_by_one(old, new):
                add("off-by-one", f"change `{old.strip()}` to `{new.strip()}`")
            elif _CONDITION_RE.match(old) and _CONDITION_RE.match(new):
                add("change-condition", f"change `{old.strip()}` to `{new.strip()}`")
            elif old.strip().startswith("return") and new.strip().startswith("return"):
                add("change-return", f"change `{old.strip()}` to `{new.strip()}`")
        new_text, old_text = "\n".join(f.added), "\n".join(f.removed)
        if re.search(r"\bis (?:not )?None\b|\bif not \w", new_text) and not re.search(r"\bis (?:not )?None", old_text):
            add("none-guard")
        if re.search(r"^\s*(?:try:|except\b)", new_text, re.M) and not re.search(r"^\s*except\b", old_text, re.M):
            add("handle-exception")
        if ".get(" in new_text and ".get(" not in old_text:
            add("default-value")
        if "await " in new_text and "await " not in old_text:
            add("add-await")
        if any(c in new_text and c not in old_text for c in _CONVERSIONS):
            add("convert-type")
    if not kinds:
        grew, shrank = any(f.added for f in files), any(f.removed for f in files)
        add("edit-code" if grew == shrank else "add-code" if grew else "remove-code")
    order = list(KIND_PHRASES)
    return sorted(kinds, key=order.index), details


def _off_by_one(old: str, new: str) -> bool:
    a, b = _IDENT_RE.findall(old), _IDENT_RE.findall(new)
    if len(a) != len(b):
        return ("<=" in old) != ("<=" in new) or bool(re.search(r"[-+] ?1\b", old)) != bool(
            re.search(r"[-+] ?1\b", new)
        )
    diffs = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(diffs) != 1:
        return False
    x, y = diffs[0]
    if x.isdigit() and y.isdigit():
        return abs(int(x) - int(y)) == 1
    return {x, y} in ({"<", "<="}, {">", ">="})


def _excerpt(files: list[FileDelta]) -> str:
    out: list[str] = []
    for f in files:
        out.append(f"--- {f.path}")
        out += [f"-{line[:LINE_CHARS]}" for line in f.removed[:EXCERPT_LINES]]
        out += [f"+{line[:LINE_CHARS]}" for line in f.added[:EXCERPT_LINES]]
    if len(out) > EXCERPT_LINES:
        out = [*out[:EXCERPT_LINES], f"... ({len(out) - EXCERPT_LINES} more changed lines)"]
    return "\n".join(out)


def summarise(edits: Sequence[Edit]) -> ChangeSummary:
    """What `edits` changed, together (the same file edited twice counts once)."""
    merged: dict[str, FileDelta] = {}
    for edit in edits:
        for delta in _parsed(edit) or _lines_only(edit):
            current = merged.get(delta.path)
            if current is None:
                merged[delta.path] = delta
                continue
            current.added += delta.added
            current.removed += delta.removed
            current.pairs += delta.pairs
            current.blocks += delta.blocks
            current.places += [p for p in delta.places if p not in current.places]
    files = list(merged.values())
    kinds, details = _kinds(files)
    return ChangeSummary(files, kinds, details, _excerpt(files))


def rebuild(files: Sequence[FileDelta]) -> ChangeSummary:
    """The summary of deltas given by their `blocks` only (a part of a fix: see `attribution.attributed`)."""
    out = []
    for f in files:
        delta = FileDelta(f.path, f.action, places=list(f.places), blocks=[(list(r), list(a)) for r, a in f.blocks])
        for removed, added in delta.blocks:
            delta.removed += removed
            delta.added += added
            delta.pairs += list(zip(removed, added, strict=False))
        out.append(delta)
    kinds, details = _kinds(out)
    return ChangeSummary(out, kinds, details, _excerpt(out))


def similarity(a: str, b: str) -> float:
    """How alike two texts are (0..1), by their words."""
    return difflib.SequenceMatcher(None, a.lower().split(), b.lower().split(), autojunk=False).ratio()
