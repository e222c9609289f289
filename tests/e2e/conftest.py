"""Fixtures for end-to-end runs: real subprocesses and real MCP clients from npm.

The npm clients are installed by `.ci/run` (SKILLBANK_NODE_BIN points at their bin dir). Locally a missing
client skips its test; in CI (SKILLBANK_REQUIRE_E2E=1) it fails, so CI can never pass without running them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def _require(what: str) -> None:
    if os.environ.get("SKILLBANK_REQUIRE_E2E") == "1":
        pytest.fail(f"{what} is required in CI but missing")
    pytest.skip(f"{what} is not installed (run .ci/run, or set SKILLBANK_NODE_BIN)")


@pytest.fixture
def node_tool():
    def find(name: str) -> str:
        bin_dir = os.environ.get("SKILLBANK_NODE_BIN")
        candidate = Path(bin_dir) / name if bin_dir else None
        if candidate is not None and candidate.exists():
            return str(candidate)
        found = shutil.which(name)
        if found is None:
            _require(f"the npm client {name!r}")
        return str(found)

    return find


@pytest.fixture
def skillbank_exe() -> str:
    import sys

    exe = Path(sys.executable).with_name("skillbank")
    if not exe.exists():
        pytest.fail(f"{exe} is missing: run `make install`")
    return str(exe)
