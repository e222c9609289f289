"""Mutants of a project: every operator applied at every covered site of its non-test modules.

A mutant is a candidate only when the mutated module still compiles and its AST differs from the original's
(a textual change that means nothing is no bug); two edits giving the same AST are one candidate. That check
parses the whole module, so for a project it runs lazily, on the candidates synthesis actually tries.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agent.tasks.model import is_test_path
from agent.tasks.operators import OPERATORS
from agent.tasks.source import Source

SKIP_DIRS = frozenset(".git .venv venv build dist docs doc examples benchmarks node_modules".split())
SKIP_FILES = frozenset({"setup.py", "conftest.py", "noxfile.py", "tasks.py", "__main__.py", "_version.py"})


@dataclass(frozen=True)
class Mutant:
    path: str
    """Repo-relative, forward slashes."""
    operator: str
    line: int
    description: str
    original: str
    mutated: str
    key: str
    """Identifies the mutant by its file and resulting AST (duplicates share it)."""

    @property
    def gold_patch(self) -> str:
        return unified_diff(self.path, self.mutated, self.original)


def unified_diff(path: str, before: str, after: str) -> str:
    """A -p1 diff (a/ b/ prefixes) from `before` to `after`, with `\\ No newline at end of file` where needed."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out: list[str] = []
    for line in difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}", n=3):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def source_files(repo: Path) -> list[str]:
    """The project's own Python modules: not tests, not build or docs trees, not hidden dirs."""
    found: list[str] = []
    for path in sorted(repo.rglob("*.py")):
        rel = path.relative_to(repo)
        parts = rel.parts
        if any(p in SKIP_DIRS or p.startswith(".") for p in parts[:-1]) or rel.name in SKIP_FILES:
            continue
        posix = rel.as_posix()
        if not is_test_path(posix):
            found.append(posix)
    return found


def mutants_of(path: str, text: str, covered: Iterable[int] | None = None, *, validate: bool = True) -> list[Mutant]:
    """The mutants of one module (only at `covered` lines, when given), one per distinct edit.

    With `validate`, only those that compile to a different AST (see `RealityCheck`); without, that costly check (a
    parse of the whole module per mutant) is left to the caller, for the few candidates it actually tries.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = None if covered is None else set(covered)
    src = Source(text)
    seen: set[str] = set()
    out: list[Mutant] = []
    for name, operator in OPERATORS.items():
        for edit in operator(tree, src):
            if lines is not None and edit.line not in lines:
                continue
            mutated = text[: edit.start] + edit.text + text[edit.end :]
            key = hashlib.sha256(f"{path}\0{edit.start}\0{edit.end}\0{edit.text}".encode()).hexdigest()[:16]
            if key in seen:
                continue
            seen.add(key)
            out.append(Mutant(path, name, edit.line, edit.description, text, mutated, key))
    if not validate:
        return out
    check = RealityCheck()
    return [m for m in out if check(m)]


class RealityCheck:
    """Whether mutants are real bugs, with each original module's AST dump computed once."""

    def __init__(self) -> None:
        self._dumps: dict[tuple[str, int], str] = {}
        self._mutated: set[str] = set()

    def __call__(self, mutant: Mutant) -> bool:
        """The mutant compiles, differs from the original's AST, and no earlier mutant gave the same AST."""
        slot = (mutant.path, hash(mutant.original))
        if slot not in self._dumps:
            self._dumps[slot] = ast.dump(ast.parse(mutant.original))
        try:
            dump = ast.dump(ast.parse(mutant.mutated))
        except (SyntaxError, ValueError):
            return False
        if dump == self._dumps[slot]:
            return False
        digest = hashlib.sha256(f"{mutant.path}\0{dump}".encode()).hexdigest()
        if digest in self._mutated:
            return False
        self._mutated.add(digest)
        return True


def all_mutants(repo: Path, coverage: Mapping[str, set[int]] | None) -> list[Mutant]:
    """Mutants of every source file of `repo`; with `coverage`, only files and lines the tests executed."""
    out: list[Mutant] = []
    for rel in source_files(repo):
        lines = None if coverage is None else coverage.get(rel)
        if coverage is not None and not lines:
            continue
        try:
            text = (repo / rel).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "\r" in text:  # CRLF files would not round-trip through the text edits
            continue
        out.extend(mutants_of(rel, text, lines, validate=False))
    return out
