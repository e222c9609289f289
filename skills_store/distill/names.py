"""Whose is a name: the user's own (abstracted in a lesson) or the language's and its libraries' (kept).

A lesson is only reusable when it keeps what identifies the failure and drops what says where it happened.
`module 'collections' has no attribute 'Mapping'` must keep `collections` and `Mapping`: they are what another
agent will see again, in any repo. `name 'itemz' is not defined` must drop `itemz`: it is one user's typo.

Not the user's own:
- standard-library modules (`sys.stdlib_module_names`, plus the modules Python 3 removed or renamed, which is
  where Python 2 leftovers fail), third-party modules (import names of the installed distributions, the modules
  the failure's traceback runs through in `site-packages`, and what the user's code imports that is not theirs);
- builtins (`builtins`, and the Python 2 builtins such as `unicode` and `xrange`), builtin type names
  (`NoneType`, `coroutine`, `dict_items`) and the methods of builtin types, Python 2's `dict.iteritems` included.

The user's own: the identifiers defined in the code the trajectory touched (functions, classes, parameters,
assigned names, from the edits' diffs and, when the workspace is still there, the files themselves) and the
modules that are files or packages of the workspace. Their own definitions win over a known name they shadow.

An attribute (`t.isAlive`) that no Python file of the workspace defines is a library's, once the whole workspace was
read (`add_workspace_definitions`, `is_library_attribute`): without the workspace it stays the user's.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import functools
import importlib.metadata
import keyword
import os
import re
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

#: Standard-library modules that Python 3 removed (3.12 and 3.13 included) or that only Python 2 had.
REMOVED_STDLIB = frozenset(
    "imp asynchat asyncore distutils smtpd cgi cgitb crypt imghdr mailcap msilib nis nntplib ossaudiodev pipes "
    "sndhdr spwd sunau telnetlib uu xdrlib audioop chunk lib2to3 urllib2 urlparse ConfigParser Queue StringIO "
    "cStringIO cPickle HTMLParser httplib cookielib Cookie __builtin__ commands thread SocketServer Tkinter "
    "tkMessageBox xmlrpclib SimpleHTTPServer BaseHTTPServer md5 sha sets exceptions new string_utils".split()
)
PY2_BUILTINS = frozenset(
    "unicode xrange basestring long raw_input unichr reduce file execfile reload cmp buffer apply intern coerce "
    "raw_unicode".split()
)
#: Methods builtin types had in Python 2 only.
PY2_METHODS = frozenset("iteritems iterkeys itervalues has_key viewitems viewkeys viewvalues next".split())
ABC_NAMES = frozenset(collections.abc.__all__)
STDLIB = frozenset(sys.stdlib_module_names) | REMOVED_STDLIB

_BUILTIN_TYPES = (dict, list, str, bytes, bytearray, set, frozenset, tuple, int, float, complex, object, type)
BUILTIN_NAMES = frozenset(dir(builtins)) | PY2_BUILTINS
BUILTIN_TYPE_NAMES = frozenset(
    {t.__name__ for t in vars(builtins).values() if isinstance(t, type)}
    | {t.__name__ for t in vars(types).values() if isinstance(t, type)}
    | {type(v).__name__ for v in ({}.keys(), {}.values(), {}.items(), iter([]), iter(()), iter(""), range(0))}  # type: ignore[var-annotated]
    | {"NoneType", "NotImplementedType", "ellipsis", "coroutine", "generator", "async_generator", "function"}
)
BUILTIN_METHODS = frozenset(a for t in _BUILTIN_TYPES for a in dir(t)) | PY2_METHODS
#: Methods only a mapping has: the receiver of one is shown as `<mapping>` in an edit rule.
MAPPING_METHODS = (frozenset(dir(dict)) - frozenset(dir(list)) - frozenset(dir(str))) | {"has_key", "get"}

_SITE_PACKAGES_RE = re.compile(r"(?:site|dist)-packages/([A-Za-z_]\w*)")
_IMPORT_RE = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\s+(.+)|import\s+(.+))$")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(([^)]*)")
_CLASS_RE = re.compile(r"^\s*class\s+([A-Za-z_]\w*)")
_ASSIGN_RE = re.compile(r"^\s*([A-Za-z_][\w, ]*?)\s*(?::[^=]+)?=(?!=)")
_FOR_RE = re.compile(r"\bfor\s+([A-Za-z_][\w, ]*?)\s+in\b|\bas\s+([A-Za-z_]\w*)|\blambda\s+([\w, ]*):")
_PATH_RE = re.compile(r"(?:^|[\s'\"(])((?:[\w.-]+/)*[\w-]+\.py)\b")
_ABS_PATH_RE = re.compile(r"(?:^|[\s'\"(])(/(?:[\w.@+-]+/)+[\w-]+\.py)\b")
MAX_FILE_BYTES = 200_000


@functools.lru_cache(maxsize=1)
def installed_modules() -> frozenset[str]:
    """Top-level import names of the installed distributions (read once per process)."""
    try:
        return frozenset(importlib.metadata.packages_distributions())
    except Exception:  # a broken distribution's metadata must not stop distillation
        return frozenset()


@dataclass
class Names:
    """What the user's own names are in one trajectory, and what that makes of any other name."""

    user: set[str] = field(default_factory=set)
    """Identifiers defined in the user's code."""
    user_modules: set[str] = field(default_factory=set)
    """Top-level modules that are the user's files or packages."""
    imported: set[str] = field(default_factory=set)
    """Top-level modules the user's code imports or the failure ran through that are not the user's."""
    from_modules: set[str] = field(default_factory=set)
    """Names the user's code imports from modules that are not theirs (`from json import loads` -> `loads`)."""
    from_origins: dict[str, set[str]] = field(default_factory=dict)
    """The modules each of `from_modules` was imported from (a name imported from the user's module is theirs)."""
    traceback_paths: set[str] = field(default_factory=set)
    """The user's files a failure's traceback runs through (read too, when the workspace is there)."""
    read_files: bool = False
    """Whether the touched files themselves were read (then a name they do not define is not the user's)."""
    defined: set[str] = field(default_factory=set)
    """Every name the workspace's Python files define (functions, classes, parameters, assigned names and
    attributes), read once the whole workspace was (`add_workspace_definitions`)."""
    scanned: bool = False
    """Whether `defined` holds the whole workspace's definitions (then an attribute defined nowhere is a library's)."""
    definitions_from: str | None = None
    """The workspace `defined` is read from, on the first `is_library_attribute` (most trajectories never ask)."""

    def is_user(self, name: str) -> bool:
        return name in self.user or name in self.user_modules

    def is_module(self, dotted: str) -> bool:
        """A module (or a dotted path into one) that is not the user's own."""
        root = dotted.split(".", 1)[0]
        if not root.isidentifier() or root in self.user_modules:
            return False
        return root in STDLIB or root in self.imported or root in installed_modules()

    def is_known(self, name: str) -> bool:
        """A bare name that is not the user's own: a builtin, a library module, a name imported from a library."""
        if self.is_user(name):
            return False
        return name in BUILTIN_NAMES or name in BUILTIN_TYPE_NAMES or name in self.from_modules or self.is_module(name)

    def is_library_attribute(self, name: str) -> bool:
        """An attribute (`t.isAlive`, `resp.json`) that neither the trajectory's code nor any file of the workspace
        defines: a library's, once the whole workspace was read."""
        if self.definitions_from is not None:
            workspace, self.definitions_from = self.definitions_from, None
            self.add_workspace_definitions(workspace)
        return self.scanned and name not in self.user and name not in self.defined and not keyword.iskeyword(name)

    def is_known_type(self, name: str) -> bool:
        """The `T` of `'T' object ...`: a builtin type or a dotted name into a library module."""
        if self.is_user(name.split(".", 1)[0]):
            return False
        if name in BUILTIN_TYPE_NAMES or name in self.from_modules or ("." in name and self.is_module(name)):
            return True
        # A class the user's files do not define (`Thread`, `DataFrame`) is a library's, once those files were read.
        return self.read_files and name[:1].isupper() and name.isidentifier()

    # -- reading the user's code ------------------------------------------------------------------------------
    def add_module_path(self, path: str) -> None:
        """A workspace file: its top-level package (or module) and its own module name are the user's."""
        parts = PurePosixPath(path.replace("\\", "/")).parts
        if not parts or not parts[-1].endswith((".py", ".pyi")):
            return
        stem = PurePosixPath(parts[-1]).stem
        for part in [*parts[:-1], stem]:
            if part.isidentifier() and part not in ("src", "lib", "tests", "test"):
                self.user_modules.add(part)
                break
        if stem.isidentifier() and stem != "__init__":
            self.user_modules.add(stem)

    def add_code(self, text: str) -> None:
        """Definitions and imports in source text: a whole file (read with `ast`) or diff lines (line by line)."""
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            for line in text.splitlines():
                self._add_line(line)
            return
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.user.add(node.name)
            elif isinstance(node, ast.arg):
                self.user.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.user.add(node.id)
            elif isinstance(node, ast.Import):
                self.imported |= {a.name.split(".")[0] for a in node.names if a.name.split(".")[0] not in self.user}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.imported.add(node.module.split(".")[0])
                self._imported_from(node.module, [a.asname or a.name for a in node.names])

    def _add_line(self, line: str) -> None:
        line = line.split("#", 1)[0]
        imp = _IMPORT_RE.match(line)
        if imp:
            if imp.group(1) and not imp.group(1).startswith("."):
                self.imported.add(imp.group(1).split(".")[0])
                self._imported_from(imp.group(1), [n.split(" as ")[-1].strip(" ()") for n in imp.group(2).split(",")])
            elif imp.group(3):
                self.imported |= {n.strip().split(".")[0].split(" ")[0] for n in imp.group(3).split(",")}
            return
        for regex in (_DEF_RE, _CLASS_RE):
            match = regex.match(line)
            if match:
                self.user.add(match.group(1))
                if regex is _DEF_RE:
                    self.user |= set(_params(match.group(2)))
                return
        assign = _ASSIGN_RE.match(line)
        if assign:
            self.user |= {n.strip() for n in assign.group(1).split(",") if n.strip().isidentifier()}
        for found in _FOR_RE.finditer(line):
            for group in found.groups():
                if group:
                    self.user |= {n.strip() for n in group.split(",") if n.strip().isidentifier()}

    def _imported_from(self, module: str, imported: Iterable[str]) -> None:
        for name in imported:
            self.from_modules.add(name)
            self.from_origins.setdefault(name, set()).add(module.split(".")[0])

    def add_failure_text(self, text: str, workspace: str | None = None) -> None:
        """A failure's traceback: the user's files it names (an absolute path inside `workspace` too), the
        libraries it ran through."""
        self.imported |= set(_SITE_PACKAGES_RE.findall(text))
        for line in text.splitlines():
            code = line.lstrip("> \t")
            if _IMPORT_RE.match(code) and not line.lstrip().startswith("E "):
                self._add_line(code)
        root = workspace.rstrip("/") + "/" if workspace else ""
        for path in _ABS_PATH_RE.findall(text) if root else []:
            if path.startswith(root) and "site-packages" not in path:
                self.add_module_path(path[len(root) :])
                self.traceback_paths.add(path[len(root) :])
        for path in _PATH_RE.findall(text):
            if "site-packages" not in path and "/lib/python" not in path and not path.startswith("/"):
                self.add_module_path(path)
                self.traceback_paths.add(path)

    def add_workspace_modules(self, workspace: str | None) -> None:
        """The modules imported by name that are files or packages of the workspace are the user's, edited or not
        (`from helpers import parse_line` with a `helpers.py` next to the code)."""
        if not workspace:
            return
        root = Path(workspace)
        for module in sorted(self.imported):
            if module in STDLIB or not module.isidentifier():
                continue
            for base in (root, root / "src"):
                if (base / f"{module}.py").is_file() or (base / module / "__init__.py").is_file():
                    self.user_modules.add(module)
                    break

    def add_workspace_definitions(self, workspace: str | None) -> None:
        """The names every Python file of the workspace defines (`defined`). A workspace too big to read whole
        leaves `scanned` off: a name found nowhere in part of it could still be the user's."""
        if not workspace or not Path(workspace).is_dir():
            return
        found: set[str] = set()
        files = total = 0
        for path in _python_files(Path(workspace)):
            if path is None:
                return  # too many folders to read whole
            files += 1
            try:
                stat = path.stat()
            except OSError:
                continue
            total += stat.st_size
            if files > MAX_SCAN_FILES or total > MAX_SCAN_BYTES:
                return
            found |= _file_definitions(str(path), stat.st_mtime_ns, stat.st_size)
        self.defined |= found
        self.scanned = True

    def finish(self) -> Names:
        """Drop from `imported` what turned out to be the user's own (and the names imported only from the
        user's modules), and keywords from every set."""
        self.imported -= self.user_modules
        self.from_modules -= {n for n, mods in self.from_origins.items() if mods <= self.user_modules}
        self.user -= set(keyword.kwlist) | {"self", "cls", "_"}
        return self


def _params(text: str) -> Iterable[str]:
    for part in text.split(","):
        name = part.split("=", 1)[0].split(":", 1)[0].strip().lstrip("*")
        if name.isidentifier():
            yield name


#: A workspace with more Python files or bytes than this is not read whole for its definitions.
MAX_SCAN_FILES = 3000
MAX_SCAN_BYTES = 50_000_000
MAX_SCAN_DIRS = 5000
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages"})
_ATTR_ASSIGN_RE = re.compile(r"\.([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")
_DEFINED_RE = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)")


def _python_files(root: Path) -> Iterable[Path | None]:
    """The workspace's Python files, without hidden folders, virtual environments and installed packages; None
    once more than `MAX_SCAN_DIRS` folders were walked."""
    for walked, (dirpath, dirnames, filenames) in enumerate(os.walk(root)):
        if walked >= MAX_SCAN_DIRS:
            yield None
            return
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and d not in _SKIP_DIRS and not (Path(dirpath, d, "pyvenv.cfg")).exists()
        )
        for name in sorted(filenames):
            if name.endswith((".py", ".pyi")):
                yield Path(dirpath, name)


@functools.lru_cache(maxsize=20_000)
def _file_definitions(path: str, mtime_ns: int, size: int) -> frozenset[str]:
    """The names one file defines (cached by its modification time and size)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace") if size <= MAX_FILE_BYTES * 5 else ""
    except OSError:
        return frozenset()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(_ATTR_ASSIGN_RE.findall(text)) | frozenset(_DEFINED_RE.findall(text))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.alias) and node.asname:
            out.add(node.asname)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)  # a keyword argument may name an attribute: `Model(total=1)`
    return frozenset(out)


def read_workspace_file(workspace: str | None, path: str) -> str | None:
    """The text of a touched file when the workspace is still on disk (inside it, at most `MAX_FILE_BYTES`)."""
    if not workspace:
        return None
    root = Path(workspace)
    try:
        target = (root / path).resolve()
        if not target.is_relative_to(root.resolve()) or not target.is_file():
            return None
        if target.stat().st_size > MAX_FILE_BYTES:
            return None
        return target.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
