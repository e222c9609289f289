"""The MCP Inspector CLI from npm talks to `skillbank serve`; Claude Code, Codex and Cline: test_agent_clients.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user-home")}
    (tmp_path / "user-home").mkdir(exist_ok=True)
    return env


def test_mcp_inspector_lists_the_four_tools(tmp_path: Path, node_tool, skillbank_exe) -> None:
    out = subprocess.run(
        [node_tool("mcp-inspector"), "--cli", skillbank_exe, "serve", "--workspace", str(tmp_path),
         "--method", "tools/list"],
        env={**env_for(tmp_path), "SKILLBANK_EMBEDDER": "hash"}, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    tools = {t["name"]: t for t in json.loads(out.stdout)["tools"]}
    assert set(tools) == {"search_skills", "apply_patch", "run_tests", "record_trajectory"}
    assert tools["search_skills"]["inputSchema"]["required"] == ["query"]
    assert "outputSchema" in tools["run_tests"]


def test_mcp_inspector_calls_search_skills(tmp_path: Path, node_tool, skillbank_exe) -> None:
    out = subprocess.run(
        [node_tool("mcp-inspector"), "--cli", skillbank_exe, "serve", "--workspace", str(tmp_path),
         "--method", "tools/call", "--tool-name", "search_skills",
         "--tool-arg", "query=RuntimeError: dictionary changed size during iteration", "--tool-arg", "k=1"],
        env={**env_for(tmp_path), "SKILLBANK_EMBEDDER": "hash"}, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result.get("isError") is not True
    assert result["structuredContent"]["skills"][0]["skill_id"] == "starter-dict-changed-size-during-iteration"


def test_the_example_claude_settings_wire_the_server_and_the_hooks() -> None:
    settings = json.loads((Path(__file__).parents[2] / "claude_settings.example.json").read_text())
    assert settings["mcpServers"]["skillbank"]["args"][0] == "serve"
    events = set(settings["hooks"])
    assert {"SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"} <= events
    commands = [h["command"] for entries in settings["hooks"].values() for e in entries for h in e["hooks"]]
    assert all(c.endswith("hook claude") for c in commands)
