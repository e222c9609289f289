"""Read-only workspace tools for the bundled agent: read a file with line numbers, list files, search text.

The agent can look but not touch: every edit goes through skillbank's `apply_patch`, so each change is checked,
all or nothing, and captured in the trajectory like any other client's. Paths are guarded at this edge (resolved,
inside the workspace, never `.git/`); a bad request is a `ToolFailed` the model reads and adapts to.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

from pydantic_ai import FunctionToolset
from pydantic_ai.exceptions import ToolFailed

#: Folders no agent needs to read: VCS data, environments, caches.
SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", "node_modules", ".pytest_cache", ".mypy_cache",
                          ".ruff_cache", ".tox", ".hypothesis"})  # fmt: skip
MAX_READ_LINES = 400
MAX_LINE_CHARS = 500
MAX_LISTED = 500
MAX_MATCHES = 100
MAX_FILE_BYTES = 2_000_000


def resolve_inside(root: Path, path: str) -> Path:
    """`path` (relative to the workspace) resolved, or a `ToolFailed` saying why it is refused."""
    if not path or path.startswith("-"):
        raise ToolFailed(f"bad path {path!r}: give a path relative to the workspace root, e.g. src/app.py")
    if Path(path).is_absolute():
        raise ToolFailed(f"{path!r} is absolute; give it relative to the workspace root")
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise ToolFailed(f"{path!r} is outside the workspace")
    if ".git" in target.relative_to(root).parts:
        raise ToolFailed(f"{path!r} is inside .git/, which the agent does not read")
    if not target.exists():
        raise ToolFailed(f"{path!r} does not exist; list_files shows what does")
    return target


def _walk(root: Path, start: Path) -> Iterator[Path]:
    if start.is_file():
        yield start
        return
    for entry in sorted(start.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            if entry.name not in SKIPPED_DIRS:
                yield from _walk(root, entry)
        elif entry.is_file() and entry.resolve().is_relative_to(root):
            yield entry


def _text(path: Path) -> str | None:
    if path.stat().st_size > MAX_FILE_BYTES:
        return None
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " [...]"


def workspace_toolset(
    workspace: Path, on_call: Callable[[str, dict[str, object], str], Awaitable[None]] | None = None
) -> FunctionToolset[None]:
    """The three read-only tools for `workspace`; `on_call(tool, args, summary)` sees every call (progress)."""
    root = workspace.resolve()
    toolset: FunctionToolset[None] = FunctionToolset()

    async def report(tool: str, args: dict[str, object], text: str) -> str:
        if on_call is not None:
            await on_call(tool, args, text)
        return text

    @toolset.tool_plain
    async def read_file(path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Read a text file of the workspace with line numbers (at most 400 lines per call).

        Args:
            path: file path relative to the workspace root.
            start_line: first line to show (1-based).
            end_line: last line to show (inclusive); default start_line + 399.
        """
        target = resolve_inside(root, path)
        if not target.is_file():
            raise ToolFailed(f"{path!r} is a directory; use list_files")
        text = _text(target)
        if text is None:
            raise ToolFailed(f"{path!r} is binary or over {MAX_FILE_BYTES} bytes")
        lines = text.splitlines()
        first = max(1, start_line)
        last = min(len(lines), end_line if end_line is not None else first + MAX_READ_LINES - 1)
        last = min(last, first + MAX_READ_LINES - 1)
        body = "\n".join(f"{n:>5}| {_cut(lines[n - 1])}" for n in range(first, last + 1))
        more = (
            f"\n[lines {first}-{last} of {len(lines)}; read on with start_line={last + 1}]" if last < len(lines) else ""
        )
        return await report(
            "read_file", {"path": path, "start_line": first}, f"{path} ({len(lines)} lines)\n{body}{more}"
        )

    @toolset.tool_plain
    async def list_files(path: str = ".", pattern: str | None = None) -> str:
        """List the files under a folder of the workspace, recursively (caches and .git skipped).

        Args:
            path: folder relative to the workspace root.
            pattern: optional glob on the relative path, e.g. "*.py" or "tests/*".
        """
        start = resolve_inside(root, path)
        found = [p.relative_to(root).as_posix() for p in _walk(root, start)]
        if pattern:
            found = [f for f in found if fnmatch.fnmatch(f, pattern) or fnmatch.fnmatch(Path(f).name, pattern)]
        shown = found[:MAX_LISTED]
        tail = (
            f"\n[{len(found) - MAX_LISTED} more not shown; narrow path or pattern]" if len(found) > MAX_LISTED else ""
        )
        return await report("list_files", {"path": path, "pattern": pattern}, "\n".join(shown) + tail or "(no files)")

    @toolset.tool_plain
    async def search_text(query: str, path: str = ".", regex: bool = False) -> str:
        """Search the workspace's text files for a string (or a Python regex); answers path:line: text.

        Args:
            query: the text to find (case-sensitive), or a regular expression when regex is true.
            path: folder or file to search, relative to the workspace root.
            regex: treat query as a regular expression.
        """
        if not query:
            raise ToolFailed("query is empty")
        try:
            matcher = re.compile(query if regex else re.escape(query))
        except re.error as exc:
            raise ToolFailed(f"bad regular expression {query!r}: {exc}") from None
        hits: list[str] = []
        for file in _walk(root, resolve_inside(root, path)):
            text = _text(file)
            if text is None:
                continue
            rel = file.relative_to(root).as_posix()
            hits.extend(f"{rel}:{n}: {_cut(line.strip())}" for n, line in enumerate(text.splitlines(), 1)
                        if matcher.search(line))  # fmt: skip
            if len(hits) >= MAX_MATCHES:
                break
        more = f"\n[stopped at {MAX_MATCHES} matches; narrow the search]" if len(hits) >= MAX_MATCHES else ""
        body = "\n".join(hits[:MAX_MATCHES]) + more if hits else f"no match for {query!r}"
        return await report("search_text", {"query": query, "path": path}, body)

    return toolset
