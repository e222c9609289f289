"""Which Python runs a workspace's tests, and which host directories it needs to see inside a sandbox.

The order is the contract's: the workspace's own `.venv/bin/python`, else the configured test python
(`SKILLBANK_TEST_PYTHON`), else `python` (or `python3`) on the host PATH. A workspace's interpreter is never run
on the host to learn about it (it is the workspace's code): its `pyvenv.cfg` is read instead. The configured and
PATH interpreters belong to the operator; they are asked once for their real executable and prefixes, so that a
pyenv shim or a venv resolves to paths that work without the operator's HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from sandbox.errors import InterpreterNotFound
from sandbox.exec.base import minimal_roots, path_is_under
from sandbox.exec.site_paths import is_sensitive, pth_entries

#: What the caller can do when no interpreter is found, without the operator.
WORKAROUND = "pass `command` to run_tests (e.g. 'pytest -q'), or create a `.venv` in the workspace"
_QUERY = (
    "import json, site, sys; "
    "print(json.dumps([sys.executable, sys.prefix, sys.base_prefix, getattr(site, 'getsitepackages', list)()]))"
)


class Interpreter(BaseModel):
    """The Python of a test run."""

    path: Path
    """The executable, as it is run (inside the workspace for a workspace venv)."""
    roots: list[Path]
    """Host directories it needs, to be shown read-only inside a sandbox (the venv and its base install)."""
    source: Literal["workspace", "configured", "path"]
    pth_dropped: list[tuple[Path, Path]] = []
    """(`.pth` file inside the workspace, the dir it adds outside the workspace and the Python installs): not shown."""
    pth_refused: list[tuple[Path, Path]] = []
    """(`.pth` file, a dir it adds that is never shown: see `sandbox.exec.site_paths.is_sensitive`)."""


def find_interpreter(
    workspace: Path, test_python: str | None = None, host_path: str | None = None, hidden: Sequence[Path] = ()
) -> Interpreter:
    """The interpreter for the default test command of `workspace` (see the module docstring). Its `roots` include
    the dirs its `.pth` files add (`sandbox.exec.site_paths`), never one of the `hidden` paths (the data dir).

    Raises `InterpreterNotFound`, saying how to fix it, when none exists.
    """
    venv_python = workspace / ".venv" / "bin" / "python"
    if venv_python.exists():
        return _venv_interpreter(workspace / ".venv", venv_python, hidden)
    if test_python:
        found = shutil.which(test_python, path=host_path) if os.sep not in test_python else test_python
        if not found or not Path(found).exists():
            raise InterpreterNotFound(
                f"the configured test python {test_python!r} does not exist; fix SKILLBANK_TEST_PYTHON, create a "
                "`.venv` in the workspace, or pass `command` to run_tests",
                workaround=WORKAROUND,
            )
        return _operator_interpreter(str(Path(found).absolute()), "configured", workspace, hidden)
    for name in ("python", "python3"):
        found = shutil.which(name, path=host_path)
        if found:
            return _operator_interpreter(found, "path", workspace, hidden)
    raise InterpreterNotFound(
        "no Python found for the tests: create a `.venv` in the workspace, set SKILLBANK_TEST_PYTHON, "
        "or pass `command` to run_tests",
        workaround=WORKAROUND,
    )


def _venv_interpreter(venv: Path, python: Path, hidden: Sequence[Path]) -> Interpreter:
    """Host dirs a workspace venv needs: itself, its base install, and what its `.pth` files add.

    Everything here is read from files the workspace controls, so nothing is trusted that does not look like a
    Python install: a base dir must be a CPython prefix (`bin/python3.X` beside `lib/python3.X/os.py`), never
    `/`, HOME or above it, and one inside HOME is shown only as its own `bin` and `lib` (a `home = ~/.local/bin`
    must not bring back `~/.local/share`). A `.pth` entry is only followed inside the workspace, the venv, those
    dirs or this server's own Python; the others are listed in `pth_dropped`, for the run's warnings.
    """
    workspace = venv.parent
    linked = _linked_venv(venv)
    prefixes: list[Path] = []
    cfg = venv / "pyvenv.cfg"
    if cfg.is_file():
        for line in cfg.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                home = Path(value.strip())
                prefixes.append(home.parent if home.name == "bin" else home)
    real = python.resolve()
    if real.is_file() and os.access(real, os.X_OK):
        prefixes.append(real.parent.parent)
    shown = [d for p in prefixes if _is_python_prefix(p) for d in _prefix_dirs(p.resolve())]
    allowed = [workspace, venv, *linked, *shown, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    own = [venv, *linked, *shown]
    extra, dropped, refused = [], [], []
    for pth, entry in [e for site in sorted(venv.glob("lib/python3*/site-packages")) for e in pth_entries(site)]:
        if is_sensitive(entry, [*own, workspace.resolve()], hidden):
            refused.append((pth, entry))
        elif path_is_under(entry, [a.resolve() for a in allowed]):
            extra.append(entry)
        else:
            dropped.append((pth, entry))
    roots = minimal_roots([venv, *linked, *shown, *extra])
    return Interpreter(path=python, roots=roots, source="workspace", pth_dropped=dropped, pth_refused=refused)


def _linked_venv(venv: Path) -> list[Path]:
    """The real dir of a workspace `.venv` that is a link out of the workspace (a `--candidates` copy shares the
    project's venv so): a sandbox that hides HOME, /tmp or /run must show it, or the link leads nowhere. Only a
    virtualenv (a `pyvenv.cfg` file and a `bin` dir) is shown, never `/`, HOME or above it."""
    real = venv.resolve()
    if real.is_relative_to(venv.parent.resolve()) or _forbidden(real):
        return []
    return [real] if (real / "pyvenv.cfg").is_file() and (real / "bin").is_dir() else []


def _forbidden(path: Path) -> bool:
    """`/`, the user's HOME and every dir above it: never shown to a sandbox on a workspace's say-so."""
    home = Path.home().resolve()
    return path == Path("/") or path == home or home.is_relative_to(path)


def _is_python_prefix(path: Path) -> bool:
    """A CPython install prefix: some `bin/python3.X` with its standard library `lib/python3.X/os.py`."""
    if not path.is_absolute() or not path.is_dir() or _forbidden(path.resolve()):
        return False
    for exe in (path / "bin").glob("python3.*"):
        version = exe.name.removeprefix("python")
        if version.replace(".", "").isdigit() and (path / "lib" / f"python{version}" / "os.py").is_file():
            return True
    return False


def _prefix_dirs(prefix: Path) -> list[Path]:
    """What of a base install a sandbox is shown: all of it outside HOME; inside HOME only its `bin` and `lib*`,
    so that a prefix which is a general-purpose dir (`~/.local`) does not re-expose the rest of it."""
    if not prefix.is_relative_to(Path.home().resolve()):
        return [prefix]
    return [prefix / name for name in ("bin", "lib", "lib64") if (prefix / name).is_dir()]


def _operator_interpreter(
    python: str, source: Literal["configured", "path"], workspace: Path, hidden: Sequence[Path]
) -> Interpreter:
    """The operator's interpreter: its prefixes, and the dirs its `.pth` files add (an editable install of a sibling
    project). A `.pth` file inside the workspace (an interpreter there) counts as the workspace's own: its entries
    are shown only inside the workspace and the interpreter's dirs."""
    executable, prefix, base_prefix, sites = _query(python)
    path = Path(executable)
    dirs = [r for r in (Path(prefix), Path(base_prefix), path.resolve().parent.parent) if r != Path("/")]
    own = [r.resolve() for r in dirs]
    ws = workspace.resolve()
    extra, dropped, refused = [], [], []
    for pth, entry in [e for site in sites for e in pth_entries(Path(site))]:
        if is_sensitive(entry, [*own, ws], hidden):
            refused.append((pth, entry))
        elif not path_is_under(pth.resolve(), [ws, workspace]) or path_is_under(entry, [ws, *own]):
            extra.append(entry)
        else:
            dropped.append((pth, entry))
    roots = minimal_roots([*dirs, *extra])
    return Interpreter(path=path, roots=roots, source=source, pth_dropped=dropped, pth_refused=refused)


@lru_cache(maxsize=16)
def _query(python: str) -> tuple[str, str, str, tuple[str, ...]]:
    proc: subprocess.CompletedProcess[str] | None = None
    try:
        proc = subprocess.run(
            [python, "-I", "-c", _QUERY], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
        executable, prefix, base_prefix, sites = json.loads(proc.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, TypeError, IndexError) as exc:
        why = str(exc)
        if proc is not None:  # it ran, and did not answer: what it said says what is wrong (a pyenv shim's line)
            said = " ".join(proc.stderr.split())[-300:]
            why = f"exit {proc.returncode}" + (f": {said}" if said else ", no answer on stdout")
        raise InterpreterNotFound(
            f"the test python {python!r} does not run ({why}); fix SKILLBANK_TEST_PYTHON, create a `.venv` in the "
            "workspace, or pass `command` to run_tests",
            workaround=WORKAROUND,
        ) from exc
    return str(executable or python), str(prefix), str(base_prefix), tuple(str(site) for site in sites)
