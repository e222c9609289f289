"""The pytest config files above a workspace that pytest would take there (a monorepo's root `pyproject.toml`).

pytest looks for its config from the dir of its arguments upward and takes, in the first dir that has one, the
first of `pytest.toml`, `.pytest.toml`, `pytest.ini`, `.pytest.ini` (always, even empty), `pyproject.toml` (with
`[tool.pytest]` or `[tool.pytest.ini_options]`), `tox.ini` (with `[pytest]`) and `setup.cfg` (with `[tool:pytest]`);
when none has any, the first `pyproject.toml` it passed. It then loads the `conftest.py` files from that file's dir
down. Bare pytest run in a workspace below such a config finds it; a sandbox that hides the dirs above the
workspace (HOME, /tmp under bubblewrap; all of them in docker) must show that file, and those `conftest.py` files,
read-only and one by one (never their dirs), for the run to be the same. The files are read as data here.

Nothing is taken from HOME itself or a dir above it, nor from `/`: a config there is the operator's, not the
project's, and showing it is not worth the risk of what such a file may hold.
"""

from __future__ import annotations

import contextlib
import re
import tomllib
from pathlib import Path

#: pytest 9's config names, in its order of precedence within one dir.
CONFIG_NAMES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_SECTION = re.compile(r"^\[([^\]]+)\]", re.MULTILINE)
_MAX_BYTES = 1 << 20


def parent_config_files(workspace: Path) -> list[Path]:
    """The config file above `workspace` that pytest would take for a run there (none when the workspace has its
    own), then the `conftest.py` files from its dir down to the workspace's parent."""
    ws = workspace.resolve()
    if not ws.is_dir():
        return []
    first_pyproject: Path | None = None
    for base in (ws, *ws.parents):
        if _private(base):
            break
        for name in CONFIG_NAMES:
            path = base / name
            if not path.is_file():
                continue
            if name == "pyproject.toml" and first_pyproject is None:
                first_pyproject = path
            if _configures_pytest(path):
                return [] if base == ws else _with_conftests(path, ws)
    if first_pyproject is None or first_pyproject.parent == ws:
        return []
    return _with_conftests(first_pyproject, ws)


def _with_conftests(config: Path, ws: Path) -> list[Path]:
    between = [config.parent, *reversed([d for d in ws.parents if d.is_relative_to(config.parent)][:-1])]
    return [config, *(d / "conftest.py" for d in dict.fromkeys(between) if (d / "conftest.py").is_file())]


def _configures_pytest(path: Path) -> bool:
    """Whether pytest takes `path` as its config (an unreadable or broken one too: pytest stops at it, failing)."""
    if path.name in ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"):
        return True
    try:
        if path.stat().st_size > _MAX_BYTES:
            return True
        text = path.read_text(errors="replace")
    except OSError:
        return True
    if path.name == "pyproject.toml":
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            return True
        table = tool.get("pytest") if isinstance(tool, dict) else None
        return isinstance(table, dict) and bool(table)
    sections = set(_SECTION.findall(text))
    return "pytest" in sections if path.name == "tox.ini" else bool(sections & {"tool:pytest", "pytest"})


def _private(path: Path) -> bool:
    """`/`, HOME or a dir above HOME: no config is taken from there, and the search stops."""
    if path == Path("/"):
        return True
    with contextlib.suppress(RuntimeError, KeyError):
        home = Path.home().resolve()
        return path == home or home.is_relative_to(path)
    return False
