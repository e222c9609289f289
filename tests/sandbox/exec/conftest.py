"""Fixtures of the sandbox backends' tests: a workspace, and a dir the bubblewrap sandbox shows read-only."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A dir outside /tmp, /run and HOME (where /var/run/docker.sock-like sockets live), which the bubblewrap sandbox
    shows read-only; removed afterwards."""
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK) or Path.home().resolve() in (base, *base.parents):
        pytest.skip("needs a writable /var/tmp outside HOME")
    path = Path(tempfile.mkdtemp(prefix="sb-sock-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)
