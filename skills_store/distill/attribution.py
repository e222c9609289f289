"""Which edits fixed which failure, and "fixes" that only made the test stop asking.

A fix episode (`episodes`) says that a failure went away after some edits; it does not say that those edits
fixed it. Two cases need more than that before a lesson may be learned:

- **The test was deleted or weakened.** An edit that removes the failing test's `def`, deletes its file, removes
  assertions from a test file (more `assert` lines removed than added) or adds a trivially true one (`assert
  True`), makes the failure disappear without fixing anything; so do edits of test files only when the failure
  was raised in the code under test (`calc.py:3`), or when it is an `AssertionError` and they rewrite an assertion
  (the expectation bent to fit the code). Such a fix teaches nothing (`tampering` names why). Test-only edits of
  the test's own code that keep the test and its assertions still count: correcting a `pytest.raises(...)` call,
  `self.assertEquals` -> `self.assertEqual`.
- **One patch removed several failures.** The edits are then shared, and each failure keeps only the changed
  blocks that plausibly fixed it (`attributed`): those naming a name its error line quotes (`'iteritems'`), those
  whose removed line its traceback shows (the line that raised, or a line of a function it ran through), and, when
  the workspace is there, those that change a name a function of its traceback reads (`RATE` for `with_tax`).
  A failure left with no block has no lesson: nothing says which edit fixed it.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Iterable

from skills_store.distill.changes import ChangeSummary, FileDelta, rebuild
from skills_store.distill.episodes import Failure
from skills_store.distill.names import BUILTIN_TYPE_NAMES, read_workspace_file

_TEST_PATH_RE = re.compile(
    r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_tests?\.\w+$|conftest\.py$|[^/]*\.(?:test|spec)\.[cm]?[jt]sx?$)"
)
_ASSERT_RE = re.compile(r"^\s*(?:assert\b|self\.assert\w*\s*\(|self\.fail\s*\()")
_TRIVIAL_ASSERT_RE = re.compile(r"^\s*assert\s*\(?\s*(?:True|1|not\s+(?:False|None|0))\s*\)?\s*(?:,.*)?(?:#.*)?$")
_LIBRARY_RE = re.compile(r"(?:site|dist)-packages/|/lib/python\d|^<")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_QUOTED_RE = re.compile(r"'([A-Za-z_][\w.]*)'|\"([A-Za-z_][\w.]*)\"")
_CALL_RE = re.compile(r"([A-Za-z_]\w*)\s*\(")
_MARKER_RE = re.compile(r"^(?:>|E)?\s+")
#: Removed lines shorter than this say too little to be matched against a traceback (`)`, `pass`, `else:`).
_MIN_LINE = 6


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH_RE.search(path.replace("\\", "/")))


def _test_function(test_id: str) -> str | None:
    """`tests/test_a.py::TestX::test_y[1-2]` -> `test_y`."""
    if "::" not in test_id:
        return None
    name = test_id.rsplit("::", 1)[1].split("[", 1)[0]
    return name if name.isidentifier() else None


def _test_file(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def tampering(failure: Failure, change: ChangeSummary) -> str | None:
    """Why the edits made the failure disappear without fixing it (see the module doc), or None."""
    function = _test_function(failure.test_id)
    if function is not None:
        defined = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(function)}\s*\(")
        removed = any(defined.match(line) for f in change.files for line in f.removed)
        added = any(defined.match(line) for f in change.files for line in f.added)
        if removed and not added:
            return f"deletes the failing test `{function}`"
    test_file = _test_file(failure.test_id)
    for f in change.files:
        if f.action == "delete" and test_file and (test_file == f.path or test_file.endswith("/" + f.path)):
            return f"deletes the failing test's file `{f.path}`"
    tests = [f for f in change.files if is_test_path(f.path)]
    for f in tests:
        if any(_TRIVIAL_ASSERT_RE.match(line) for line in f.added):
            return f"adds an assertion that is always true to `{f.path}`"
        if _asserts(f.removed) > _asserts(f.added):
            return f"removes assertions from `{f.path}`"
    if not tests or len(tests) < len(change.files):
        return None
    sig = failure.signature
    raised_in = sig.location.rsplit(":", 1)[0] if sig and sig.location else ""
    if raised_in and not is_test_path(raised_in) and not _LIBRARY_RE.search(raised_in):
        return f"edits only tests for a failure raised in `{raised_in}`"
    if sig is not None and sig.exc_type == "AssertionError" and any(_asserts(f.removed) for f in tests):
        return "rewrites the failing assertion instead of the code"
    return None


def _asserts(lines: Iterable[str]) -> int:
    return sum(1 for line in lines if _ASSERT_RE.match(line))


def attributed(failure: Failure, change: ChangeSummary, workspace: str | None) -> ChangeSummary | None:
    """The part of `change` that plausibly fixed `failure` (module doc); None when no changed block is its."""
    sig = failure.signature
    anchors = {a or b for a, b in _QUOTED_RE.findall(sig.example if sig else "")} - BUILTIN_TYPE_NAMES
    anchors = {part for a in anchors for part in a.split(".") if not keyword.iskeyword(part)}
    shown = {_MARKER_RE.sub("", line).strip() for line in failure.message.splitlines()}
    shown = {line for line in shown if len(line) >= _MIN_LINE}
    reached = _reached_names(failure.message, change, workspace)
    kept: list[FileDelta] = []
    for f in change.files:
        blocks = [
            (removed, added) for removed, added in f.blocks if _block_is_its(removed, added, anchors, shown, reached)
        ]
        if blocks:
            kept.append(FileDelta(f.path, f.action, places=list(f.places), blocks=blocks))
    return rebuild(kept) if kept else None


def _block_is_its(removed: list[str], added: list[str], anchors: set[str], shown: set[str], reached: set[str]) -> bool:
    if any(line.strip() in shown for line in removed):
        return True
    before = {w for line in removed for w in _IDENT_RE.findall(line)}
    after = {w for line in added for w in _IDENT_RE.findall(line)}
    if (before | after) & anchors:
        return True
    changed = (before ^ after) if before and after else before | after
    assigned = {w for line in [*removed, *added] for w in _assigned(line)}
    return bool((changed | assigned) & reached)


def _assigned(line: str) -> list[str]:
    """The names a changed line assigns (`RATE = 0.25` -> RATE): the value it changes is read through them."""
    match = re.match(r"^\s*([A-Za-z_][\w, ]*?)\s*(?::[^=]+)?=(?!=)", line)
    return [n.strip() for n in match.group(1).split(",") if n.strip().isidentifier()] if match else []


def _reached_names(message: str, change: ChangeSummary, workspace: str | None) -> set[str]:
    """The names read by the functions the failure's traceback calls, in the changed files still on disk."""
    called = {c for c in _CALL_RE.findall(message) if not keyword.iskeyword(c)}
    called |= set(re.findall(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)", message, re.M))
    if not called or not workspace:
        return set()
    out: set[str] = set()
    for f in change.files:
        text = read_workspace_file(workspace, f.path) if f.path.endswith((".py", ".pyi")) else None
        if text is None:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in called:
                out |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return out
