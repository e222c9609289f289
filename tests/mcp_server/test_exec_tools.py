"""apply_patch and run_tests through a real in-memory MCP client on a real git repo with a real bug."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.services import build_deps, open_bank
from mcp_server.settings import Settings

pytestmark = pytest.mark.anyio

RUN_TESTS_FIELDS = {
    "status", "total", "passed", "failed", "errors", "skipped", "xfailed", "xpassed", "duration_s", "exit_code",
    "backend", "command", "tests", "reward", "suggested_skills", "output_tail",
}  # fmt: skip
FIX = """\
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def mean(values):
-    return sum(values) / len(values) + 1
+    return sum(values) / len(values)
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text("def mean(values):\n    return sum(values) / len(values) + 1\n")
    (root / "test_calc.py").write_text(
        "from calc import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n\n\n"
        "def test_mean_of_one():\n    assert mean([5]) == 5\n"
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run([*git, *args], cwd=root, check=True, capture_output=True)
    return root


@pytest.fixture
def settings(tmp_path: Path, repo: Path, skill_factory) -> Settings:
    settings = Settings(
        home=tmp_path / "home", embedder="hash", starter_skills=False, workspace=repo, test_python=sys.executable,
        sandbox="local",
    )  # fmt: skip
    bank = open_bank(settings)
    bank.upsert(
        [skill_factory("assert-math", "Arithmetic assertion off by one", "AssertionError: assert 3.0 == 2",
                       "Check the formula for a stray constant.", language="python")]
    )  # fmt: skip
    bank.close()
    return settings


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


async def test_failing_run_then_patch_then_passing_run(settings: Settings, repo: Path) -> None:
    deps = build_deps(settings)
    async with Client(create_server(deps)) as client:
        failing = await client.call_tool("run_tests", {})
        assert not failing.is_error, failing.content
        run = failing.structured_content
        assert set(run) >= RUN_TESTS_FIELDS
        assert run["status"] == "failed"
        assert (run["passed"], run["failed"]) == (0, 2)
        assert run["tests"][0]["outcome"] == "failed"
        assert "assert" in run["tests"][0]["message"]
        assert run["suggested_skills"][0]["skill_id"] == "assert-math"
        assert 0 < run["reward"]["value"] < 1

        applied = await client.call_tool("apply_patch", {"patch": FIX})
        assert not applied.is_error, applied.content
        assert applied.structured_content["files"][0] == {
            "path": "calc.py", "action": "modify", "hunks": 1, "offset_lines": 0, "fuzzy": False, "match": "exact",
        }  # fmt: skip

        passing = (await client.call_tool("run_tests", {"tests": ["test_calc.py"]})).structured_content
        assert passing["status"] == "passed"
        assert passing["reward"]["value"] == pytest.approx(1.0)
        assert passing["suggested_skills"] == []
        closed = await client.call_tool("record_trajectory", {"final": True, "outcome": "success"})
    trajectory = deps.trajectories.get(closed.structured_content["trajectory_id"])
    calls = [s for s in trajectory.steps if s.kind == "tool_call"]
    assert [s.tool for s in calls] == ["run_tests", "apply_patch", "run_tests"]
    assert calls[0].result["failures"][0]["id"] == "test_calc.py::test_mean"
    assert calls[1].result["files"] == [{"action": "modify", "path": "calc.py"}]
    assert trajectory.reward == pytest.approx(1.0)
    assert "assert-math" in trajectory.skills_shown


async def test_a_patch_that_does_not_match_is_a_tool_error_and_changes_nothing(settings: Settings, repo: Path) -> None:
    before = tree_hash(repo)
    stale = FIX.replace("+ 1", "+ 2")
    async with Client(create_server(build_deps(settings, tools=["apply_patch"]))) as client:
        result = await client.call_tool("apply_patch", {"patch": stale})
    assert result.is_error
    text = result.content[0].text
    assert "calc.py" in text
    assert "hunk 1" in text.lower()
    assert tree_hash(repo) == before


async def test_a_patch_escaping_the_workspace_is_refused(settings: Settings, repo: Path) -> None:
    before = tree_hash(repo)
    escape = "--- /dev/null\n+++ b/../outside.py\n@@ -0,0 +1 @@\n+x = 1\n"
    async with Client(create_server(build_deps(settings, tools=["apply_patch"]))) as client:
        result = await client.call_tool("apply_patch", {"patch": escape})
    assert result.is_error
    assert "outside" in result.content[0].text
    assert not (repo.parent / "outside.py").exists()
    assert tree_hash(repo) == before


async def test_run_tests_refuses_a_test_path_outside_the_workspace(settings: Settings) -> None:
    async with Client(create_server(build_deps(settings, tools=["run_tests"]))) as client:
        result = await client.call_tool("run_tests", {"tests": ["../elsewhere/test_x.py"]})
        bad_timeout = await client.call_tool("run_tests", {"timeout_s": 0})
    assert result.is_error
    assert "workspace" in result.content[0].text
    assert bad_timeout.is_error
    assert "timeout_s" in bad_timeout.content[0].text


async def test_names_the_os_cannot_handle_are_clear_tool_errors(settings: Settings, repo: Path) -> None:
    before = tree_hash(repo)
    long_name = "a" * 300 + ".py"
    patch = f"--- /dev/null\n+++ b/{long_name}\n@@ -0,0 +1 @@\n+x = 1\n"
    async with Client(create_server(build_deps(settings, tools=["apply_patch", "run_tests"]))) as client:
        patched = await client.call_tool("apply_patch", {"patch": patch})
        ran = await client.call_tool("run_tests", {"tests": [long_name]})
    assert patched.is_error
    assert "File name too long" in patched.content[0].text
    assert ran.is_error
    assert "File name too long" in ran.content[0].text
    assert tree_hash(repo) == before


async def test_the_no_skills_ablation_lists_no_search_and_suggests_nothing(settings: Settings) -> None:
    deps = build_deps(settings.model_copy(update={"no_skills": True}))
    async with Client(create_server(deps)) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        failing = await client.call_tool("run_tests", {})
    assert listed == {"apply_patch", "run_tests", "record_trajectory"}
    assert failing.structured_content["status"] == "failed"
    assert failing.structured_content["suggested_skills"] == []
    assert "Skills from earlier sessions" not in failing.content[0].text


async def test_apply_patch_refuses_the_data_dir_inside_the_workspace(settings: Settings, repo: Path) -> None:
    inside = settings.model_copy(update={"home": repo / ".skillbank"})
    patch = "--- /dev/null\n+++ b/.skillbank/chroma/seg/index_metadata.pickle\n@@ -0,0 +1 @@\n+(dp0\n"
    async with Client(create_server(build_deps(inside, tools=["apply_patch"]))) as client:
        result = await client.call_tool("apply_patch", {"patch": patch})
    assert result.is_error
    assert "inside the skillbank data dir (.skillbank/)" in result.content[0].text
    assert not (repo / ".skillbank" / "chroma").exists()  # the server writes its own files there, nothing else


async def test_file_names_that_are_not_utf8_come_back_quoted_as_git_quotes_them(settings: Settings, repo: Path) -> None:
    with open(os.path.join(os.fsencode(repo), b"bad\xff.py"), "wb") as handle:
        handle.write(b"def f(:\n")
    patch = '--- /dev/null\n+++ "b/latin\\351.txt"\n@@ -0,0 +1 @@\n+x\n'
    async with Client(create_server(build_deps(settings, tools=["apply_patch", "run_tests"]))) as client:
        patched = await client.call_tool("apply_patch", {"patch": patch})
        ran = await client.call_tool("run_tests", {"tests": ["test_calc.py"]})
    assert not patched.is_error
    assert [f["path"] for f in patched.structured_content["files"]] == ['"latin\\351.txt"']
    assert os.path.exists(os.path.join(os.fsencode(repo), b"latin\xe9.txt"))
    assert '"latin\\351.txt"' in patched.content[0].text
    assert not ran.is_error
    assert [p["path"] for p in ran.structured_content["syntax_errors"]] == ['"bad\\377.py"']
    for result in (patched, ran):  # what the stdio writer sends: JSON text, encoded as UTF-8
        json.dumps(result.structured_content, ensure_ascii=False).encode("utf-8")
        result.content[0].text.encode("utf-8")
