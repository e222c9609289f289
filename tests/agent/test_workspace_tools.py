"""The agent's read-only workspace tools and workspace snapshots: paths guarded, output bounded, caches ignored."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ToolFailed

from agent.tree import is_git_repo, snapshot, tree_diff
from agent.workspace_tools import workspace_toolset

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def tools(tmp_path: Path):
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("".join(f"line {n}\n" for n in range(1, 501)))
    (root / "README.md").write_text("hello world\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("secret")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"\x00")
    (tmp_path / "outside.txt").write_text("no")
    toolset = workspace_toolset(root)
    return {name: tool.function for name, tool in toolset.tools.items()}


async def test_read_file_numbers_lines_and_pages_long_files(tools) -> None:
    text = await tools["read_file"]("pkg/mod.py")
    assert "    1| line 1" in text
    assert "  400| line 400" in text
    assert "line 401" not in text
    assert "read on with start_line=401" in text
    assert "  500| line 500" in await tools["read_file"]("pkg/mod.py", start_line=450)


@pytest.mark.parametrize(
    ("path", "message"),
    [("../outside.txt", "outside the workspace"), ("/etc/passwd", "is absolute"), (".git/config", "inside .git/"),
     ("missing.py", "does not exist"), ("-rf", "bad path"), ("pkg", "is a directory")],
)  # fmt: skip
async def test_bad_paths_are_refused_with_a_reason(tools, path: str, message: str) -> None:
    with pytest.raises(ToolFailed, match=message):
        await tools["read_file"](path)


async def test_list_files_skips_git_and_caches_and_filters_by_pattern(tools) -> None:
    listed = (await tools["list_files"]()).splitlines()
    assert listed == ["README.md", "pkg/mod.py"]
    assert await tools["list_files"](pattern="*.md") == "README.md"


async def test_search_text_answers_path_and_line(tools) -> None:
    assert await tools["search_text"]("^line 42$", path="pkg", regex=True) == "pkg/mod.py:42: line 42"
    assert (await tools["search_text"]("hello")) == "README.md:1: hello world"
    assert "no match" in await tools["search_text"]("nowhere")
    with pytest.raises(ToolFailed, match="bad regular expression"):
        await tools["search_text"]("(", regex=True)


def test_a_snapshot_sees_dirty_and_untracked_files_and_leaves_the_index_alone(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "a.py").write_text("a = 1\n")
    before = snapshot(repo)
    assert is_git_repo(repo)
    (repo / "a.py").write_text("a = 2\n")
    (repo / "new.py").write_text("b = 1\n")
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\x00\x01")
    diff = tree_diff(repo, before, snapshot(repo))
    assert "-a = 1\n+a = 2" in diff
    assert "+++ b/new.py" in diff
    assert "__pycache__" not in diff
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    assert sorted(status.splitlines()) == ["?? __pycache__/", "?? a.py", "?? new.py"]  # nothing was staged
