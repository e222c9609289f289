"""`apply_patch`: parse, plan every file in memory, check Python syntax, then write everything or nothing.

The syntax check compiles the new text (to catch what `ast.parse` misses, such as `return` outside a function)
but never runs it: a new file whole, a changed one in the top-level blocks the patch wrote (`sandbox.syntax`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from sandbox.collector import collector_paused
from sandbox.patch.dirs import Dirs
from sandbox.patch.jail import Jail
from sandbox.patch.models import PatchResult, SyntaxIssue
from sandbox.patch.ops import FilePatch
from sandbox.patch.overlay import Entry
from sandbox.patch.parse import iter_patch
from sandbox.patch.plan import Plan, Planner
from sandbox.patch.textfile import TextFile
from sandbox.patch.write import commit
from sandbox.syntax import file_syntax_error
from sandbox.syntax_worker import Batch, Error, SyntaxWorker


def apply_patch(
    root: Path,
    patch: str,
    *,
    dry_run: bool = False,
    check_syntax: bool = True,
    syntax_worker: SyntaxWorker | None = None,
    hidden: Sequence[Path] = (),
) -> PatchResult:
    """Apply a unified diff or a Codex envelope to the workspace at `root`, all or nothing.

    Raises `sandbox.errors.PatchError` when the patch is refused (malformed, a hunk that does not match or matches
    ambiguously, a path outside the workspace, a binary file, over 10 MB); its message is the whole feedback for
    the model, and nothing was written. With `dry_run` the patch is planned and reported but nothing is written.
    `check_syntax` compiles every changed `.py` file and reports its syntax error (the patch is applied anyway);
    with a `syntax_worker` the files are compiled in that process while they are planned and written (the same
    errors; the server passes one, a library caller gets the in-process check). Paths inside a `hidden` path (the
    server passes its data dir) are refused like those under `.git/`. The cyclic garbage collector is paused
    meanwhile (`sandbox.collector`: the engine's many small objects make no cycles).
    """
    with collector_paused():
        return _apply_patch(root, patch, dry_run, check_syntax, syntax_worker, hidden)


def _apply_patch(
    root: Path,
    patch: str,
    dry_run: bool,
    check_syntax: bool,
    syntax_worker: SyntaxWorker | None,
    hidden: Sequence[Path],
) -> PatchResult:
    sections = iter_patch(patch)  # planned as they are parsed: the syntax worker gets its first file sooner
    try:
        jail = Jail(Path(root), hidden)
    except Exception:
        list(sections)  # a malformed patch is reported first, as when it was parsed whole before anything else
        raise
    try:
        return _planned(jail, sections, dry_run, check_syntax, syntax_worker, patch)
    finally:
        jail.close()


def _planned(
    jail: Jail,
    sections: Iterable[FilePatch],
    dry_run: bool,
    check_syntax: bool,
    syntax_worker: SyntaxWorker | None,
    patch: str,
) -> PatchResult:
    batch = syntax_worker.batch(patch) if check_syntax and syntax_worker is not None else None
    if batch is None:
        plan = Planner(jail).run(sections)
        syntax = [issue for entry in plan.entries for issue in _syntax_issues(entry)] if check_syntax else []
        if not dry_run:
            _write(plan, jail)
        return _result(plan, syntax, dry_run)
    jobs = _Jobs(batch)
    try:
        plan = Planner(jail, on_planned=jobs.planned, python_first=True).run(sections)
        jobs.settle(plan.entries)
        if not dry_run:
            _write(plan, jail)
    except BaseException:
        batch.close(wanted=False)
        raise
    return _result(plan, jobs.issues(batch.close()), dry_run)


def _write(plan: Plan, jail: Jail) -> None:
    """Write the plan through the directories the jail checked and opened (never by path: see `sandbox.patch.dirs`)."""
    commit(plan.ops, jail.root, jail.dirs)
    drop_stale_bytecode((op.path for op in plan.ops), jail.dirs)


def _result(plan: Plan, syntax: list[SyntaxIssue], dry_run: bool) -> PatchResult:
    return PatchResult(
        applied=not dry_run, dry_run=dry_run, files=plan.changes, syntax_errors=syntax, warnings=plan.warnings
    )


class _Jobs:
    """Which syntax job holds each planned `.py` file's final state (a later section over it needs a new job)."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        self.sent: dict[int, tuple[TextFile, list[tuple[int, int]] | None, int]] = {}
        self.order: list[tuple[str, int]] = []

    def planned(self, entry: Entry) -> None:
        if _checked(entry):
            assert entry.text is not None
            number = self.batch.submit(entry.rel, entry.encode(), entry.text.lines, entry.changed)
            self.sent[id(entry)] = (entry.text, entry.changed, number)

    def settle(self, entries: list[Entry]) -> None:
        """The jobs of the files as planned, in the order of `entries`; then the batch is sealed."""
        for entry in entries:
            if not _checked(entry):
                continue
            sent = self.sent.get(id(entry))
            if sent is None or sent[0] is not entry.text or sent[1] != entry.changed:
                self.planned(entry)
                sent = self.sent[id(entry)]
            self.order.append((entry.rel, sent[2]))
        self.batch.seal()

    def issues(self, errors: list[Error]) -> list[SyntaxIssue]:
        return [issue for rel, number in self.order for issue in _issues(rel, errors[number])]


def drop_stale_bytecode(paths: Iterable[Path], dirs: Dirs | None = None) -> None:
    """Remove the cached bytecode of changed `.py` files (through `dirs`, when given: each `__pycache__` is opened
    from the workspace root without following a link, as the files were written).

    Python trusts `__pycache__/<name>.*.pyc` when the source's mtime (in whole seconds) and size match, so a
    same-size edit within the second after the last import would run the old code in the next test run.
    """
    listed: dict[str, tuple[int | None, list[str]]] = {}  # each __pycache__ read once, not globbed per file
    for path in paths:
        folder, base = os.path.split(path)  # strings, not Paths: made per file, those cost more than the rest
        if not base.endswith(".py") or base == ".py":  # its suffix is not `.py` (`.py` alone is a stem)
            continue
        cache = os.path.join(folder, "__pycache__")
        if cache not in listed:
            listed[cache] = _cache_listing(cache, dirs)
        fd, names = listed[cache]
        prefix = f"{base[: -len('.py')]}."
        for name in names:
            if name.startswith(prefix) and name.endswith(".pyc") and len(name) >= len(prefix) + len(".pyc"):
                with contextlib.suppress(OSError):
                    os.unlink(name if fd is not None else os.path.join(cache, name), dir_fd=fd)


def _cache_listing(cache: str, dirs: Dirs | None) -> tuple[int | None, list[str]]:
    """The `__pycache__` directory's fd (None: reached by path) and the names in it; none when it cannot be read."""
    try:
        fd = dirs.fd(cache) if dirs is not None else None
        return fd, os.listdir(fd if fd is not None else cache)
    except (OSError, ValueError):
        return None, []


def _checked(entry: Entry) -> bool:
    """A Python file the patch leaves in place: what the syntax check compiles."""
    return entry.text is not None and entry.rel.endswith(".py")


def _issues(rel: str, error: Error) -> list[SyntaxIssue]:
    return [] if error is None else [SyntaxIssue(path=rel, line=error[0], message=error[1])]


def _syntax_issues(entry: Entry) -> list[SyntaxIssue]:
    """A Python file's syntax error as the patch leaves it (empty for other files, deleted files, valid code)."""
    if not _checked(entry):
        return []
    assert entry.text is not None
    return _issues(entry.rel, file_syntax_error(entry.encode(), entry.text.lines, entry.changed, entry.rel))
