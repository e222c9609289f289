"""Snapshots of a workspace as git trees, and the diff between two of them.

A snapshot is `git write-tree` over a temporary index (a copy of the real one, then `git add -A`), so it sees
tracked, modified and untracked files alike and never touches the user's index, refs or working tree. The diff
between the snapshot before and after an agent run is exactly what the agent changed, whatever was dirty before.
Caches (`__pycache__`, `.pytest_cache`, `*.pyc`) and the workspace venv are left out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from skills_store.errors import ConfigError

EXCLUDES = "__pycache__/\n*.pyc\n.pytest_cache/\n.mypy_cache/\n.ruff_cache/\n/.venv\n"
GIT_TIMEOUT_S = 120


class GitError(ConfigError):
    """A git command on the workspace failed; the message has git's own words."""


def is_git_repo(path: Path) -> bool:
    try:
        return (
            git(path, "rev-parse", "--is-inside-work-tree").strip() == "true" and git_toplevel(path) == path.resolve()
        )
    except GitError:
        return False


def git_toplevel(path: Path) -> Path:
    return Path(git(path, "rev-parse", "--show-toplevel").strip()).resolve()


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, input_text: str | None = None) -> str:
    if shutil.which("git") is None:
        raise GitError("git is not installed")
    base = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", **(env or {})}
    out = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=base,
        capture_output=True, text=True, timeout=GIT_TIMEOUT_S, input=input_text,
    )  # fmt: skip
    if out.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])} failed in {cwd}: {out.stderr.strip() or out.stdout.strip()}")
    return out.stdout


def snapshot(workspace: Path) -> str:
    """The id of a git tree holding the workspace as it is now (see the module doc)."""
    with tempfile.TemporaryDirectory(prefix="skillbank-tree-") as tmp:
        index = Path(tmp) / "index"
        excludes = Path(tmp) / "excludes"
        excludes.write_text(EXCLUDES)
        real = Path(git(workspace, "rev-parse", "--path-format=absolute", "--git-path", "index").strip())
        if real.exists():
            shutil.copyfile(real, index)
        env = {"GIT_INDEX_FILE": str(index)}
        git(workspace, "-c", f"core.excludesFile={excludes}", "add", "-A", "--", ".", env=env)
        return git(workspace, "write-tree", env=env).strip()


def tree_diff(workspace: Path, before: str, after: str) -> str:
    """A `-p1` unified diff (`a/` `b/` prefixes) from tree `before` to tree `after`; empty when equal."""
    if before == after:
        return ""
    return git(workspace, "diff", "--no-color", "--no-ext-diff", "--no-renames", "--no-textconv", before, after)


def commit_tree(workspace: Path, tree: str, message: str) -> str:
    """A commit of `tree` (no branch moves), so a worktree can start from a snapshot."""
    env = {"GIT_AUTHOR_NAME": "skillbank", "GIT_AUTHOR_EMAIL": "skillbank@localhost",
           "GIT_COMMITTER_NAME": "skillbank", "GIT_COMMITTER_EMAIL": "skillbank@localhost"}  # fmt: skip
    return git(workspace, "commit-tree", tree, "-m", message, env=env).strip()


def init_repo(path: Path) -> None:
    """Make a plain folder a git repo (for copies of workspaces that are not one), so it can be snapshotted."""
    git(path, "init", "-q")
