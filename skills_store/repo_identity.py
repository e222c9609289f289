"""The repo identity of a workspace: what the `repo` of a trajectory and of a skill means, and `repo=` filters by.

One definition for every way a trajectory is captured (the MCP server's workspace, the Claude Code hook's cwd):

- `owner/name` from the `origin` remote of the git repository that holds the workspace (the workspace or the
  nearest parent with a `.git`), e.g. `git@github.com:acme/api.git` -> `acme/api`;
- else the name of that repository's root directory (a repo without a remote, or with another remote name);
- else, outside any git repository, the workspace directory's own name;
- None only for a path without a name (`/`).

The remote makes the same project one identity across machines and clones; the directory name is the best
guess without one. Reads `.git/config` (following a worktree's `gitdir:` file); runs no command.
"""

from __future__ import annotations

import configparser
import contextlib
import re
from pathlib import Path

_REMOTE_PATH = re.compile(r"[:/]([^/:]+/[^/]+?)(?:\.git)?/?$")


def repo_identity(workspace: Path | str) -> str | None:
    """The repo identity of `workspace` (see the module doc)."""
    path = Path(workspace).expanduser()
    with contextlib.suppress(OSError):
        path = path.resolve()
    root = _git_root(path)
    if root is not None:
        remote = origin_remote(_git_config(root))
        if remote:
            return remote
        return root.name or None
    return path.name or None


def origin_remote(config_path: Path | None) -> str | None:
    """`owner/name` from the `origin` url of a git config file, else None."""
    if config_path is None or not config_path.is_file():
        return None
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read(config_path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    url = parser.get('remote "origin"', "url", fallback="").strip()
    match = _REMOTE_PATH.search(url)
    return match.group(1) if match else None


def _git_root(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        try:
            if (candidate / ".git").exists():
                return candidate
        except OSError:
            return None
    return None


def _git_config(root: Path) -> Path | None:
    """The config file of the repository at `root`; a worktree's `.git` file points at its git dir."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git / "config"
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = (root / text[len("gitdir:") :].strip()).resolve()
    common = git_dir / "commondir"
    if common.is_file():
        try:
            git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
        except OSError:
            return None
    return git_dir / "config"
