"""`apply_patch`: parse, plan every file in memory, check Python syntax, then write everything or nothing.

The syntax check compiles the new text (to catch what `ast.parse` misses, such as `return` outside a function)
but never runs it: a new file whole, a changed one in the top-level blocks the patch wrote (`sandbox.syntax`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from sandbox.patch.jail import Jail
from sandbox.patch.models import PatchResult, SyntaxIssue
from sandbox.patch.overlay import Entry
from sandbox.patch.parse import parse_patch
from sandbox.patch.plan import Planner
from sandbox.patch.write import commit
from sandbox.syntax import changed_syntax_error, syntax_error


def apply_patch(root: Path, patch: str, *, dry_run: bool = False, check_syntax: bool = True) -> PatchResult:
    """Apply a unified diff or a Codex envelope to the workspace at `root`, all or nothing.

    Raises `sandbox.errors.PatchError` when the patch is refused (malformed, a hunk that does not match or matches
    ambiguously, a path outside the workspace, a binary file, over 10 MB); its message is the whole feedback for
    the model, and nothing was written. With `dry_run` the patch is planned and reported but nothing is written.
    `check_syntax` compiles every changed `.py` file and reports its syntax error (the patch is applied anyway).
    """
    sections = parse_patch(patch)
    jail = Jail(Path(root))
    plan = Planner(jail).run(sections)
    syntax = [issue for entry in plan.entries for issue in _syntax_issues(entry)] if check_syntax else []
    if not dry_run:
        commit(plan.ops, jail.root)
        drop_stale_bytecode(op.path for op in plan.ops)
    return PatchResult(
        applied=not dry_run,
        dry_run=dry_run,
        files=plan.changes,
        syntax_errors=syntax,
        warnings=plan.warnings,
    )


def drop_stale_bytecode(paths: Iterable[Path]) -> None:
    """Remove the cached bytecode of changed `.py` files.

    Python trusts `__pycache__/<name>.*.pyc` when the source's mtime (in whole seconds) and size match, so a
    same-size edit within the second after the last import would run the old code in the next test run.
    """
    listed: dict[Path, list[str]] = {}  # each __pycache__ read once, not globbed per file (a glob compiles a regex)
    for path in paths:
        if path.suffix != ".py":
            continue
        cache = path.parent / "__pycache__"
        if cache not in listed:
            try:
                listed[cache] = os.listdir(cache)
            except OSError:
                listed[cache] = []
        prefix = f"{path.stem}."
        for name in listed[cache]:
            if name.startswith(prefix) and name.endswith(".pyc") and len(name) >= len(prefix) + len(".pyc"):
                with contextlib.suppress(OSError):
                    (cache / name).unlink()


def _syntax_issues(entry: Entry) -> list[SyntaxIssue]:
    """A Python file's syntax error as the patch leaves it (empty for other files, deleted files, valid code)."""
    if entry.text is None or not entry.rel.endswith(".py"):
        return []
    source = entry.text.encode()
    if entry.changed is None:
        error = syntax_error(source, entry.rel)
    else:
        error = changed_syntax_error(source, entry.text.lines, entry.changed, entry.rel)
    return [] if error is None else [SyntaxIssue(path=entry.rel, line=error[0], message=error[1])]
