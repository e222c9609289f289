"""The MCP server hands its data dir to the sandbox: a test run through `run_tests` cannot read it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.services import build_deps
from mcp_server.settings import Settings
from sandbox.exec.local import probe_bwrap

pytestmark = pytest.mark.anyio

PEEK = """\
from pathlib import Path

import pytest


def test_the_servers_history_is_out_of_reach():
    with pytest.raises(OSError):
        Path({db!r}).read_bytes()
"""


def _bwrap_works() -> bool:
    found = shutil.which("bwrap")
    return found is not None and probe_bwrap(found) is None


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap is not installed or cannot make namespaces here")
async def test_run_tests_cannot_read_trajectories_db_of_a_data_dir_inside_the_workspace(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    home = repo / ".skillbank"
    (repo / "test_peek.py").write_text(PEEK.format(db=str(home / "trajectories.db")))
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    settings = Settings(
        home=home, embedder="hash", starter_skills=False, workspace=repo, test_python=sys.executable, sandbox="local"
    )
    deps = build_deps(settings)
    assert (home / "trajectories.db").is_file()
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("run_tests", {})
    run = result.structured_content
    assert run is not None
    assert (run["status"], run["passed"], run["backend"]) == ("passed", 1, "local+bwrap"), run["output_tail"]
