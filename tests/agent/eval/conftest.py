"""Small task sets copied from the bundled suite (two sources, two tasks each) for harness tests."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from agent.tasks.model import load_tasks

SUITE = Path(__file__).parents[3] / "agent" / "tasks" / "suite" / "tasks"
PYTHON = sys.executable


@pytest.fixture
def small_tasks(tmp_path: Path) -> Path:
    picked: dict[str, list[Path]] = {}
    for tf in load_tasks(SUITE):
        if tf.task.source in ("repo:textkit", "repo:ledger"):
            picked.setdefault(tf.task.source, []).append(tf.path)
    out = tmp_path / "tasks"
    for paths in picked.values():
        for path in paths[:2]:
            shutil.copytree(path, out / path.name)
    return out
