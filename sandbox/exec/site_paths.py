"""The host dirs an interpreter's `.pth` files put on `sys.path`, read as data, and which of them a sandbox shows.

A `.pth` file's path lines (absolute, or relative to its site dir) name dirs that site adds to `sys.path`; its
`import` lines are code and are never run here. One form of them is read anyway: setuptools' editable installs
(`pip install -e`, PEP 660) write `import __editable___NAME_finder; ...install()`, whose finder module holds the
package dirs as a literal `MAPPING` (and `NAMESPACES`); those are parsed with `ast`, never imported.

Which entries a sandbox shows is decided by who could have written the `.pth` file: one of the operator's test
python outside the workspace is followed; one inside the workspace (a workspace `.venv`, which the agent's patches
can rewrite) only where it stays inside the workspace, the venv or a Python install. Some dirs are never shown on
any `.pth` file's say-so (`is_sensitive`): `/`, HOME and the dirs above it, a dotdir of HOME (`~/.ssh`, `~/.aws`)
outside the interpreter's own dirs, and the skillbank data dir. What is left out is named in the run's warnings
(`pth_warnings`), with the way out, where the backend really hides it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path

from sandbox.exec.base import path_is_under

_FINDER = re.compile(r"import\s+(__editable___[A-Za-z0-9_]+_finder)\b")
#: The dirs that the local backend under bubblewrap covers with an empty tmpfs (besides HOME and the data dir).
_BWRAP_COVERED = (Path("/tmp"), Path("/run"), Path("/var/run"))


def pth_entries(site_dir: Path) -> list[tuple[Path, Path]]:
    """(the `.pth` file, a path it adds) for every `.pth` file directly in `site_dir`, paths resolved."""
    found: list[tuple[Path, Path]] = []
    for pth in sorted(site_dir.glob("*.pth")):
        if not pth.is_file():
            continue  # a FIFO the tests left there would block this read, on the host, before the run
        try:
            lines = pth.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            entry = line.strip()
            if not entry or entry.startswith("#"):
                continue
            if entry.startswith(("import ", "import\t")):
                found += [(pth, path) for path in _finder_paths(site_dir, entry)]
                continue
            path = _resolved(site_dir / entry)
            if path is not None and path.is_dir():
                found.append((pth, path))
    return found


def _finder_paths(site_dir: Path, line: str) -> list[Path]:
    """The paths in the `MAPPING` / `NAMESPACES` literals of the editable finder module that `line` imports."""
    match = _FINDER.match(line)
    module = site_dir / f"{match.group(1)}.py" if match else None
    if module is None or not module.is_file() or module.stat().st_size > 1 << 20:
        return []
    try:
        tree = ast.parse(module.read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    paths: list[Path] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, literal = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, literal = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Name) or target.id not in ("MAPPING", "NAMESPACES"):
            continue
        try:
            value = ast.literal_eval(literal)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        items = value.values() if isinstance(value, dict) else ()
        for item in items:
            for text in item if isinstance(item, list) else [item]:
                path = _resolved(Path(text)) if isinstance(text, str) and text.startswith("/") else None
                if path is not None and path.exists():
                    paths.append(path)
    return paths


def is_sensitive(path: Path, own: Sequence[Path] = (), hidden: Sequence[Path] = ()) -> bool:
    """Never shown on a `.pth` file's say-so: `/`, HOME or above it, a dotdir of HOME or inside one (unless among
    `own`, the interpreter's own dirs: a pyenv install), the `hidden` paths (the data dir) or a dir holding one."""
    home = _home()
    if path == Path("/") or (home is not None and (path == home or home.is_relative_to(path))):
        return True
    if any(path_is_under(path, [h]) or h.is_relative_to(path) for h in hidden):
        return True
    if home is not None and path.is_relative_to(home) and not path_is_under(path, own):
        return path.relative_to(home).parts[0].startswith(".")
    return False


def pth_warnings(dropped: Sequence[tuple[Path, Path]], refused: Sequence[tuple[Path, Path]], backend: str) -> list[str]:
    """What the run's result says about `.pth` entries it did not show, where `backend` really hides them: docker
    mounts none of them, bubblewrap hides HOME, /tmp and the runtime dirs, plain local shows the whole host."""
    if backend == "local":
        return []

    def hidden(path: Path) -> bool:
        home = _home()
        return backend == "docker" or path_is_under(path, [*_BWRAP_COVERED, *([home] if home else [])])

    warnings = [
        f"{pth} puts {entry} on sys.path, but the sandbox does not show it (a .pth file inside the workspace may not "
        "open host dirs): set SKILLBANK_TEST_PYTHON to an interpreter outside the workspace (a workspace .venv is "
        "chosen first: rename it), or install that package into the venv without -e"
        for pth, entry in dropped
        if hidden(entry)
    ]
    warnings += [
        f"{pth} puts {entry} on sys.path, which is never shown to the tests (HOME, a dir above it, a dotdir of HOME "
        "or the skillbank data dir): install that package without -e, or move it"
        for pth, entry in refused
        if hidden(entry)
    ]
    return warnings


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError):
        return None
