"""Real clients from npm drive skillbank headless: Claude Code (`claude -p`), Codex (`codex exec`) and the Cline CLI.

`skillbank install` wires each one up in a temp HOME; a scripted model endpoint on 127.0.0.1 stands in for the
LLM only. Each test checks the effect in SKILLBANK_HOME: the trajectories hold the calls the client made.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.scripted_llm import chat_endpoint, messages_endpoint, offers, responses_endpoint

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
OFFLINE = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1", "NO_UPDATE_NOTIFIER": "1", "MCP_TIMEOUT": "90000"}  # fmt: skip


@pytest.fixture
def setup(tmp_path: Path, skillbank_exe: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """A repo with a failing test, and the environment of a user whose HOME and SKILLBANK_HOME are temp dirs.

    Afterwards every process still running with that HOME is killed: the Cline CLI leaves its hub daemon behind.
    """
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(BUGGY)
    (repo / "test_calc.py").write_text(TESTS)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    home = tmp_path / "user-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBANK_", "ANTHROPIC_", "OPENAI_", "CODEX_"))}
    env |= {"HOME": str(home), "SKILLBANK_HOME": str(tmp_path / "data"), "SKILLBANK_EMBEDDER": "hash",
            "SKILLBANK_TEST_PYTHON": sys.executable, "SKILLBANK_SANDBOX": "local", **OFFLINE}  # fmt: skip
    yield repo, env
    kill_processes_with_home(home)


def kill_processes_with_home(home: Path) -> None:
    """SIGKILL every process whose environment has HOME=`home` (what a client started and left running)."""
    marker = f"HOME={home}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if marker in environ:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGKILL)


def run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)  # fmt: skip


def trajectories(skillbank_exe: str, env: dict[str, str], cwd: Path) -> list[dict]:
    out = run([skillbank_exe, "trajectories", "export", "--format", "jsonl", "--include-open"], env, cwd)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def tools_called(trajs: list[dict], source: str) -> list[str]:
    return [s["tool"] for t in trajs if t["source"] == source for s in t["steps"] if s["kind"] == "tool_call"]


def test_claude_code_calls_run_tests_and_its_edit_is_captured_by_the_installed_hooks(
    setup: tuple[Path, dict[str, str]], node_tool, skillbank_exe: str
) -> None:
    repo, env = setup
    claude = node_tool("claude")
    installed = run([skillbank_exe, "install", "claude", "--scope", "user", "--hooks"], env, repo)
    assert installed.returncode == 0, installed.stderr
    listed = run([claude, "mcp", "list"], env, repo)
    assert "skillbank:" in listed.stdout
    assert "Connected" in listed.stdout, listed.stdout + listed.stderr
    calc = str(repo / "calc.py")
    script = [[("mcp__skillbank__run_tests", {})], [("Read", {"file_path": calc})],
              [("Edit", {"file_path": calc, "old_string": "a - b", "new_string": "a + b"})], "fixed add"]  # fmt: skip
    # while Claude's MCP connection is still starting (slow machines), the scripted model reads a file and asks again
    with messages_endpoint(script, offers("mcp__skillbank__run_tests"), [("Read", {"file_path": calc})]) as llm:
        session = {**env, "ANTHROPIC_BASE_URL": llm.url, "ANTHROPIC_API_KEY": "sk-ant-scripted"}
        out = run([claude, "-p", "make test_add pass", "--allowedTools", "mcp__skillbank__run_tests,Read,Edit",
                   "--output-format", "json"], session, repo)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    offered = {t["name"] for t in llm.requests[-1]["tools"]}
    assert {"mcp__skillbank__run_tests", "mcp__skillbank__search_skills", "Edit"} <= offered
    assert (repo / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")
    trajs = trajectories(skillbank_exe, env, repo)
    assert tools_called(trajs, "mcp:claude-code") == ["run_tests"]
    [hooked] = [t for t in trajs if t["source"] == "claude-code"]
    assert hooked["task"] == "make test_add pass"
    edit = next(s for s in hooked["steps"] if s.get("tool") == "Edit")
    assert edit["args"]["new_string"] == "a + b"


def test_a_project_install_is_approved_so_claude_code_connects_to_it(
    setup: tuple[Path, dict[str, str]], node_tool, skillbank_exe: str
) -> None:
    repo, env = setup
    installed = run([skillbank_exe, "install", "claude"], env, repo)
    assert installed.returncode == 0, installed.stderr
    listed = run([node_tool("claude"), "mcp", "list"], env, repo)
    assert "skillbank:" in listed.stdout
    assert "Connected" in listed.stdout, listed.stdout + listed.stderr


def test_codex_lists_the_installed_server_and_exec_calls_run_tests_and_search_skills(
    setup: tuple[Path, dict[str, str]], node_tool, skillbank_exe: str
) -> None:
    repo, env = setup
    codex = node_tool("codex")
    installed = run([skillbank_exe, "install", "codex", "--workspace", str(repo)], env, repo)
    assert installed.returncode == 0, installed.stderr
    listed = run([codex, "mcp", "list", "--json"], env, repo)
    assert listed.returncode == 0, listed.stderr
    [server] = [s for s in json.loads(listed.stdout) if s["name"] == "skillbank"]
    assert server["enabled"] is True
    assert server["transport"]["args"] == ["serve", "--workspace", str(repo)]
    search = ("mcp__skillbank__search_skills", {"query": "assert -1 == 5 where -1 = add(2, 3)"})
    script = [[("mcp__skillbank__run_tests", {})], [search], "done"]
    with responses_endpoint(script) as llm:
        config = Path(env["HOME"]) / ".codex" / "config.toml"
        provider = (f'model = "scripted"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
                    f'name = "scripted"\nbase_url = "{llm.url}/v1"\nwire_api = "responses"\n\n')  # fmt: skip
        config.write_text(provider + config.read_text())
        out = run([codex, "exec", "--skip-git-repo-check", "make test_add pass"], env, repo)
    assert out.returncode == 0, out.stdout + out.stderr
    namespaces = {t["name"] for t in llm.requests[0]["tools"] if t.get("type") == "namespace"}
    assert "mcp__skillbank" in namespaces
    outputs = [i for i in llm.requests[-1]["input"] if i.get("type") == "function_call_output"]
    assert len(outputs) == 2
    assert '"status":"failed"' in json.dumps(outputs[0]["output"]).replace('\\"', '"')
    trajs = trajectories(skillbank_exe, env, repo)
    assert tools_called(trajs, "mcp:codex-mcp-client") == ["run_tests", "search_skills"]


def test_cline_runs_headless_with_an_openai_compatible_provider_and_calls_skillbank_tools(
    setup: tuple[Path, dict[str, str]], node_tool, skillbank_exe: str
) -> None:
    repo, env = setup
    cline = node_tool("cline")
    installed = run([skillbank_exe, "install", "cline", "--workspace", str(repo)], env, repo)
    assert installed.returncode == 0, installed.stderr
    script = [[("skillbank__run_tests", {})], [("skillbank__search_skills", {"query": "assert -1 == 5"})], "done"]
    with chat_endpoint(script) as llm:
        auth = run([cline, "auth", "-p", "openai-compatible", "-k", "sk-scripted", "-m", "scripted", "-b",
                    f"{llm.url}/v1"], env, repo)  # fmt: skip
        assert auth.returncode == 0, auth.stdout + auth.stderr
        out = run([cline, "--json", "-c", str(repo), "--timeout", "150", "make test_add pass"], env, repo)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert events[-1]["type"] == "run_result"
    assert events[-1]["finishReason"] == "completed"
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert {"skillbank__run_tests", "skillbank__search_skills"} <= offered
    trajs = trajectories(skillbank_exe, env, repo)
    assert tools_called(trajs, "mcp:@cline/core") == ["run_tests", "search_skills"]
