"""Fixtures for the patch engine tests: real git repos in tmp_path and tree hashes."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def run_git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)
    return done.stdout.decode("utf-8", "surrogateescape")


def tree_hash(root: Path) -> str:
    """A hash over every path, file mode and byte under root (`.git/` excluded), links included as links."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        info = path.lstat()
        digest.update(f"{rel}\0{info.st_mode:o}\0".encode())
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository to act as the workspace."""
    root = tmp_path / "ws"
    root.mkdir()
    run_git(root, "init", "-q", "-b", "main")
    return root


@pytest.fixture
def commit_all() -> Callable[[Path], None]:
    def _commit(repo: Path) -> None:
        run_git(repo, "add", "-A")
        run_git(repo, "commit", "-q", "--allow-empty", "-m", "state")

    return _commit


@pytest.fixture
def git_diff(commit_all: Callable[[Path], None]) -> Callable[..., tuple[str, str]]:
    """Commit the repo, let `change()` edit it, restore the committed state; return git's diff of the edit and
    the tree hash the edit produced."""

    def _diff(repo: Path, change: Callable[[], None], *args: str) -> tuple[str, str]:
        commit_all(repo)
        change()
        expected = tree_hash(repo)
        run_git(repo, "add", "-A")
        diff = run_git(repo, "diff", "--cached", *args)
        run_git(repo, "reset", "-q", "--hard")
        run_git(repo, "clean", "-q", "-fdx")
        return diff, expected

    return _diff


@pytest.fixture
def hash_tree() -> Callable[[Path], str]:
    return tree_hash
