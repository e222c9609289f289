"""Copying a project tree without the caches and VCS state that would leak between attempts."""

from __future__ import annotations

import shutil
from pathlib import Path

IGNORED = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", ".ruff_cache")


def copy_repo(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=IGNORED, symlinks=True)
    return dst
