"""Checking the arguments of `run_tests` at the edge. A bad one raises `RequestRefused` saying what to change.

Test entries are pytest node ids or paths, relative to the workspace: they must stay inside it (after resolving
symlinks), exist, and never start with `-` (that would be an option, not a test).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from sandbox.errors import RequestRefused, WorkspaceUnavailable

BACKENDS = ("auto", "local", "docker")
MAX_TIMEOUT_S = 3600
MAX_TESTS = 1000
MAX_ENTRY_CHARS = 2000
MAX_COMMAND_CHARS = 10000


def check_workspace(workspace: Path) -> Path:
    resolved = Path(workspace).resolve()
    if not resolved.is_dir():
        raise WorkspaceUnavailable(
            f"the workspace {str(workspace)!r} is not a directory; start the server in a repository"
        )
    return resolved


def check_timeout(timeout_s: object) -> int:
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int):
        raise RequestRefused(f"timeout_s must be a whole number of seconds, 1 to {MAX_TIMEOUT_S}, not {timeout_s!r}")
    if not 1 <= timeout_s <= MAX_TIMEOUT_S:
        raise RequestRefused(f"timeout_s={timeout_s} is out of range; use 1 to {MAX_TIMEOUT_S} seconds")
    return timeout_s


def check_backend(backend: object) -> str:
    if backend not in BACKENDS:
        raise RequestRefused(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    return str(backend)


def check_command(command: str | None) -> str | None:
    if command is None:
        return None
    if not isinstance(command, str) or not command.strip():
        raise RequestRefused("command must be a non-empty shell command such as 'pytest -x tests', or null")
    if len(command) > MAX_COMMAND_CHARS:
        raise RequestRefused(f"command is {len(command)} characters long; keep it under {MAX_COMMAND_CHARS}")
    if "\0" in command:
        raise RequestRefused("command contains a NUL character; remove it")
    if command.lstrip().startswith("-"):
        raise RequestRefused(f"command {command!r} starts with '-'; give the program to run first, e.g. 'pytest -x'")
    return command.strip()


def check_tests(workspace: Path, tests: list[str] | None) -> list[str]:
    """The test entries, made relative to `workspace`; raises `RequestRefused` for the first bad one."""
    if tests is None:
        return []
    if not isinstance(tests, list):
        raise RequestRefused("tests must be a list of pytest node ids or paths, e.g. ['tests/test_app.py::test_x']")
    if len(tests) > MAX_TESTS:
        raise RequestRefused(f"{len(tests)} test entries given; pass at most {MAX_TESTS} (or a directory)")
    return [_check_entry(workspace, i, entry) for i, entry in enumerate(tests)]


def _check_entry(workspace: Path, index: int, entry: object) -> str:
    where = f"tests[{index}]"
    if not isinstance(entry, str) or not entry.strip():
        raise RequestRefused(f"{where} must be a non-empty node id or path, e.g. 'tests/test_app.py::test_x'")
    entry = entry.strip()
    if len(entry) > MAX_ENTRY_CHARS:
        raise RequestRefused(f"{where} is {len(entry)} characters long; keep test entries under {MAX_ENTRY_CHARS}")
    if entry.startswith("-"):
        raise RequestRefused(
            f"{where} {entry!r} starts with '-': options are not accepted here; pass node ids or paths only "
            "(use `command` to run pytest with options)"
        )
    if any(ch in entry for ch in "\0\n\r"):
        raise RequestRefused(f"{where} {entry!r} contains a NUL or newline character; remove it")
    path_part, sep, rest = entry.partition("::")
    try:
        target = (workspace / path_part).resolve()
        exists = target.exists()
    except OSError as exc:
        raise RequestRefused(f"{where} {entry!r} is not a usable path ({exc.strerror}); shorten or fix it") from exc
    if not target.is_relative_to(workspace):
        raise RequestRefused(
            f"{where} {entry!r} points outside the workspace; use a path relative to the workspace root "
            "such as 'tests/test_app.py'"
        )
    if not exists:
        raise RequestRefused(
            f"{where} {entry!r}: {path_part!r} does not exist in the workspace; use a path relative to the "
            "workspace root (list the tests directory to find it)"
        )
    return f"{_as_written(path_part, target, workspace)}{sep}{rest}"


def _as_written(path_part: str, target: Path, workspace: Path) -> str:
    """The entry's path relative to the workspace, through the symlinks it names (`tests/linked/test_x.py`, not the
    file the link leads to: that one is outside `tests/` and its conftest.py, and its tests' ids would not be the
    ids asked for); resolved only when written with `..` or as an absolute path."""
    written = PurePosixPath(path_part)  # `./a//b/` reads as `a/b`
    if not written.is_absolute() and ".." not in written.parts:
        return written.as_posix()
    return target.relative_to(workspace).as_posix() or "."
