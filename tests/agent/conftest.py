"""Fixtures for the bundled agent: a real git repo with a real bug, and the real `skillbank serve` over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.server import ServerCommand
from tests.agent.support import BUGGY, TESTS


def commit_all(repo: Path, message: str = "init") -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", message], cwd=repo, check=True, env=env)


@pytest.fixture
def buggy_repo(tmp_path: Path) -> Path:
    """A git repo whose `add` subtracts: test_add fails, test_mul passes."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(BUGGY)
    (repo / "test_calc.py").write_text(TESTS)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    commit_all(repo)
    return repo


@pytest.fixture
def agent_env(tmp_path: Path) -> dict[str, str]:
    """The environment of the spawned server: a temp SKILLBANK_HOME, the hash embedder, this venv's pytest."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBANK_", "OPENAI_", "ANTHROPIC_"))}
    return {**env, "SKILLBANK_HOME": str(tmp_path / "home"), "SKILLBANK_EMBEDDER": "hash",
            "SKILLBANK_TEST_PYTHON": sys.executable, "SKILLBANK_SANDBOX": "local"}  # fmt: skip


@pytest.fixture
def server(agent_env: dict[str, str]) -> ServerCommand:
    exe = Path(sys.executable).with_name("skillbank")
    if not exe.exists():
        pytest.fail(f"{exe} is missing: run `make install`")
    return ServerCommand(str(exe), (), agent_env)


@pytest.fixture
def trajectories(server: ServerCommand) -> Callable[[], list[dict]]:
    """Every trajectory in the test's SKILLBANK_HOME, with its steps, read through `skillbank trajectories export`."""

    def read() -> list[dict]:
        out = subprocess.run(
            [server.command, "trajectories", "export", "--format", "jsonl", "--include-open"],
            env=dict(server.env), capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]

    return read


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME for the install tests, with every client's and skillbank's own location variables unset."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "CLINE_DIR", "CLINE_DATA_DIR", "XDG_CONFIG_HOME", "SKILLBANK_HOME",
                "SKILLBANK_EMBEDDER"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory (where project-scope installs write)."""
    project = tmp_path / "project"
    project.mkdir()
    return project
