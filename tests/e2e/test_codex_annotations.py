"""Codex decides from skillbank's tool annotations alone what it may call unasked: with the install's
pre-approval taken out, `codex exec` (which cannot ask) still calls the read-only `search_skills` and `run_tests`,
and leaves the destructive `apply_patch` uncalled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit

from tests.agent.support import FIX
from tests.e2e.scripted_llm import responses_endpoint
from tests.e2e.test_agent_clients import run, setup, tools_called, trajectories

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
__all__ = ["setup"]  # the fixture, shared with the other real-client tests


def test_codex_exec_calls_the_harmless_tools_unasked_and_not_apply_patch(
    setup: tuple[Path, dict[str, str]], node_tool, skillbank_exe: str
) -> None:
    repo, env = setup
    codex = node_tool("codex")
    installed = run([skillbank_exe, "install", "codex", "--workspace", str(repo)], env, repo)
    assert installed.returncode == 0, installed.stderr
    config = Path(env["HOME"]) / ".codex" / "config.toml"
    doc = tomlkit.parse(config.read_text())
    del doc["mcp_servers"]["skillbank"]["tools"]  # no pre-approval: the annotations alone decide
    script = [
        [("mcp__skillbank__search_skills", {"query": "assert -1 == 5 where -1 = add(2, 3)"})],
        [("mcp__skillbank__run_tests", {})],
        [("mcp__skillbank__apply_patch", {"patch": FIX})],
        "done",
    ]
    with responses_endpoint(script) as llm:
        provider = (f'model = "scripted"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
                    f'name = "scripted"\nbase_url = "{llm.url}/v1"\nwire_api = "responses"\n\n')  # fmt: skip
        config.write_text(provider + tomlkit.dumps(doc))
        out = run([codex, "exec", "--skip-git-repo-check", "make test_add pass"], env, repo)
    assert out.returncode == 0, out.stdout + out.stderr
    called = tools_called(trajectories(skillbank_exe, env, repo), "mcp:codex-mcp-client")
    assert called == ["search_skills", "run_tests"]
    assert "a - b" in (repo / "calc.py").read_text()
    refused = [i for i in llm.requests[-1]["input"] if i.get("type") == "function_call_output"][-1]
    assert "requires approval" in json.dumps(refused["output"])
