"""Fixtures for the distillation tests: trajectories built from the steps the MCP tools store, and real buggy repos.

Steps look exactly like what `mcp_server/tools/run_tests.py` and `patch.py` capture: `run_tests` results hold
status, counts, the failing ids and `failures: [{"id", "message"}]`; `apply_patch` results hold `applied`, `files`
("modify path"), `fuzzy` and `syntax_errors`, with the patch in the arguments.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mcp_server.settings import Settings
from skills_store.models import StoredStep, Trajectory

TYPO_PATCH = """\
--- a/shop.py
+++ b/shop.py
@@ -1,3 +1,3 @@
 def total(items):
-    return sum(i.price for i in itemz)
+    return sum(i.price for i in items)
"""
TYPO_MESSAGE = (
    "NameError: name 'itemz' is not defined\n"
    "    def total(items):\n>       return sum(i.price for i in itemz)\n"
    "E       NameError: name 'itemz' is not defined\n\nshop.py:2: NameError"
)


@dataclass
class Steps:
    """Builders for the steps of a trajectory, as the MCP server captures them."""

    def run(
        self, status: str, failures: list[tuple[str, str]] = (), tests: list[str] | None = None, ok: bool | None = None
    ) -> dict[str, Any]:
        result = {
            "status": status,
            "passed": 0 if failures else 3,
            "failed": len(failures),
            "errors": 0,
            "failing": [tid for tid, _ in failures],
            "failures": [{"id": tid, "message": msg} for tid, msg in failures],
            "backend": "local",
        }
        args = {"tests": tests, "command": None, "timeout_s": 600, "backend": "auto"}
        return {"tool": "run_tests", "args": args, "result": result, "ok": status == "passed" if ok is None else ok}

    def patch(self, patch: str, files: list[str], *, applied: bool = True, fuzzy: bool = False) -> dict[str, Any]:
        result = {"applied": applied, "files": [f"modify {f}" for f in files], "fuzzy": fuzzy, "syntax_errors": 0}
        return {"tool": "apply_patch", "args": {"patch": patch, "dry_run": False}, "result": result, "ok": applied}

    def trajectory(self, *steps: dict[str, Any], tid: str = "traj-1", **fields: Any) -> Trajectory:
        now = datetime.now(UTC)
        stored = [StoredStep(index=i, ts=now, kind=s.pop("kind", "tool_call"), **s) for i, s in enumerate(steps)]
        fields.setdefault("status", "closed")
        fields.setdefault("outcome", "success")
        return Trajectory(trajectory_id=tid, steps=stored, **fields)

    def typo_fix(self, tid: str = "traj-1", **fields: Any) -> Trajectory:
        """failing run (NameError) -> patch -> passing run."""
        failing = [("tests/test_shop.py::test_total", TYPO_MESSAGE)]
        return self.trajectory(
            self.run("failed", failing), self.patch(TYPO_PATCH, ["shop.py"]), self.run("passed"), tid=tid, **fields
        )


@pytest.fixture
def steps() -> Steps:
    return Steps()


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo), *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """`make_repo(files, name="shop")`: a git repo (origin github.com/acme/<name>) with `files` committed."""

    def make(files: dict[str, str], name: str = "shop") -> Path:
        repo = tmp_path / name
        repo.mkdir()
        for rel, text in files.items():
            path = repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
        git(repo, "init", "-q")
        git(repo, "remote", "add", "origin", f"https://github.com/acme/{name}.git")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "initial")
        return repo

    return make


@pytest.fixture
def repo_settings(tmp_path: Path) -> Callable[[Path], Settings]:
    """Settings for an in-process server on `repo`: temp data dir, hash embedder, this interpreter runs the tests."""

    def make(repo: Path, **extra: Any) -> Settings:
        return Settings(
            home=tmp_path / "home",
            embedder="hash",
            starter_skills=False,
            workspace=repo,
            test_python=sys.executable,
            sandbox="local",
            **extra,
        )

    return make


@pytest.fixture
def traj_store(tmp_path: Path):
    """A real SQLite trajectory store in the test's temp dir."""
    from skills_store.trajectories.store import SQLiteTrajectoryStore

    store = SQLiteTrajectoryStore(tmp_path / "trajectories.db")
    yield store
    store.close()


@pytest.fixture
def save(traj_store) -> Callable[..., str]:
    """`save(trajectory, shown=[skill ids], used=None, close=True)`: write a built trajectory into `traj_store`.

    `used` (default: every shown skill) is named in a `record_trajectory(used_skills=...)` step, as an agent would.
    """
    from skills_store.models import Step

    def write(traj: Trajectory, shown: list[str] = (), close: bool = True, used: list[str] | None = None) -> str:
        traj_store.create(trajectory_id=traj.trajectory_id, task=traj.task, repo=traj.repo, workspace=traj.workspace)
        steps = [Step(**s.model_dump(exclude={"index"})) for s in traj.steps]
        named = list(shown) if used is None else used
        if named:
            steps.append(Step(kind="tool_call", tool="record_trajectory", result={"used_skills": named}, ok=True))
        if steps:
            traj_store.append(traj.trajectory_id, steps)
        traj_store.link_skills(traj.trajectory_id, list(shown))
        if close:
            traj_store.close_trajectory(traj.trajectory_id, traj.outcome)
        return traj.trajectory_id

    return write
