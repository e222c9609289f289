"""`skillbank agent` as users run it: against local scripted model endpoints (OpenAI Chat Completions and Responses,
Anthropic Messages)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.support import FIX
from tests.e2e.scripted_llm import chat_endpoint, messages_endpoint, responses_endpoint

SOLVE = [[("run_tests", {})], [("apply_patch", {"patch": FIX})], [("run_tests", {})], "fixed add"]


def run_agent(server, env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([server.command, "agent", *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_the_cli_solves_a_task_through_a_gateway_and_prints_a_json_summary(
    buggy_repo: Path, server, agent_env: dict[str, str], trajectories, stream: str
) -> None:
    with chat_endpoint(SOLVE) as llm:
        env = {**agent_env, "OPENAI_BASE_URL": f"{llm.url}/v1"}
        out = run_agent(server, env, "fix add", "--workspace", str(buggy_repo), "--model", "openai:qwen", "--json",
                        stream)  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["outcome"] == "success"
    assert summary["reward"] == 1.0
    assert summary["requests"] == 4
    assert summary["tokens"] == 4 * 60
    assert summary["wall_s"] > 0
    assert all(r["path"] == "/v1/chat/completions" for r in llm.requests)
    assert all(bool(r.get("stream")) == (stream == "--stream") for r in llm.requests)
    tools = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert {"run_tests", "apply_patch", "search_skills", "read_file", "list_files", "search_text"} == tools
    assert "apply_patch" in out.stderr
    assert "tokens" in out.stderr
    [traj] = trajectories()
    assert traj["trajectory_id"] == summary["trajectory_id"]
    assert traj["outcome"] == "success"
    assert [s["tool"] for s in traj["steps"] if s.get("tool")] == ["run_tests", "search_skills", "run_tests",
                                                                   "apply_patch", "run_tests"]  # fmt: skip


def test_no_skills_hides_search_skills_and_shows_no_skills(
    buggy_repo: Path, server, agent_env: dict[str, str], trajectories
) -> None:
    with chat_endpoint(["giving up"]) as llm:
        env = {**agent_env, "OPENAI_BASE_URL": f"{llm.url}/v1"}
        out = run_agent(server, env, "fix add", "--workspace", str(buggy_repo), "--model", "openai:q", "--no-skills")
    assert out.returncode == 1, out.stderr
    assert "failure: reward" in out.stdout
    tools = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert "search_skills" not in tools
    assert "Skills from earlier sessions" not in json.dumps(llm.requests[0]["messages"])
    [traj] = trajectories()
    assert "search_skills" not in [s.get("tool") for s in traj["steps"]]
    assert all(
        not (s.get("result") or {}).get("suggested_skills") for s in traj["steps"] if isinstance(s.get("result"), dict)
    )


def test_a_relative_data_dir_is_the_one_it_names_where_the_agent_was_started(
    buggy_repo: Path, server, agent_env: dict[str, str], tmp_path: Path
) -> None:
    # The server runs in the workspace: SKILLBANK_HOME=relhome once recorded into <workspace>/relhome.
    cwd = tmp_path / "here"
    cwd.mkdir()
    env = {**agent_env, "SKILLBANK_HOME": "relhome", "SKILLBANK_TEST_PYTHON": os.path.relpath(sys.executable, cwd)}
    with chat_endpoint([[("run_tests", {})], "giving up"]) as llm:
        out = subprocess.run(
            [server.command, "agent", "fix", "--workspace", str(buggy_repo), "--model", "openai:q", "--json"],
            env={**env, "OPENAI_BASE_URL": f"{llm.url}/v1"}, cwd=cwd, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout)["tests"]["total"] == 2  # the relative test python ran the tests
    assert (cwd / "relhome" / "trajectories.db").is_file()
    assert not (buggy_repo / "relhome").exists()


def test_path_settings_handed_to_the_server_are_made_absolute_here(tmp_path: Path, monkeypatch) -> None:
    from agent.server import pinned_paths

    monkeypatch.chdir(tmp_path)
    env = {"SKILLBANK_HOME": "data", "SKILLBANK_TEST_PYTHON": "venv/bin/python", "SKILLBANK_WORKSPACE": "/abs/ws",
           "SKILLBANK_EMBEDDER": "hash", "PATH": "bin"}  # fmt: skip
    assert pinned_paths(env) == {**env, "SKILLBANK_HOME": str(tmp_path / "data"),
                                 "SKILLBANK_TEST_PYTHON": str(tmp_path / "venv/bin/python")}  # fmt: skip
    assert pinned_paths({"SKILLBANK_TEST_PYTHON": "python3"}) == {"SKILLBANK_TEST_PYTHON": "python3"}  # PATH lookup


def test_settings_read_a_relative_home_and_test_python_as_absolute_paths(tmp_path: Path, monkeypatch) -> None:
    from mcp_server.settings import Settings

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKILLBANK_HOME", "rel/home")
    monkeypatch.setenv("SKILLBANK_TEST_PYTHON", "venv/bin/python")
    settings = Settings()
    assert settings.home == tmp_path / "rel" / "home"
    assert settings.test_python == str(tmp_path / "venv" / "bin" / "python")
    monkeypatch.setenv("SKILLBANK_TEST_PYTHON", "python3")
    assert Settings().test_python == "python3"


@pytest.mark.parametrize(
    ("model", "extra_env", "message"),
    [
        ("openai:gpt-4o", {}, "OPENAI_API_KEY is not set"),
        ("anthropic:claude-sonnet-4-5", {}, "ANTHROPIC_API_KEY is not set"),
        ("openai:qwen", {"OPENAI_BASE_URL": "127.0.0.1:8000/v1"}, "OPENAI_BASE_URL='127.0.0.1:8000/v1' is not an http"),
    ],
)
def test_a_missing_key_or_a_bad_base_url_is_one_line_naming_the_variable(
    buggy_repo: Path, server, agent_env: dict[str, str], model: str, extra_env: dict[str, str], message: str
) -> None:
    out = run_agent(server, {**agent_env, **extra_env}, "fix", "--workspace", str(buggy_repo), "--model", model)
    assert out.returncode == 2
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_an_unreachable_gateway_is_one_line_naming_the_variable(
    buggy_repo: Path, server, agent_env: dict[str, str]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**agent_env, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    out = run_agent(server, env, "fix", "--workspace", str(buggy_repo), "--model", "openai:q", "--no-stream")
    assert out.returncode == 2, out.stdout + out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("skillbank: error: could not reach the model")
    assert "check OPENAI_BASE_URL" in last
    assert "Traceback" not in out.stderr


def test_the_token_limit_ends_the_run_as_a_failure_naming_it(
    buggy_repo: Path, server, agent_env: dict[str, str], trajectories
) -> None:
    with chat_endpoint([[("list_files", {})]] * 5) as llm:
        env = {**agent_env, "OPENAI_BASE_URL": f"{llm.url}/v1"}
        out = run_agent(server, env, "fix", "--workspace", str(buggy_repo), "--model", "openai:q", "--json",
                        "--max-tokens", "100")  # fmt: skip
    assert out.returncode == 1, out.stderr
    summary = json.loads(out.stdout)
    assert summary["outcome"] == "failure"
    assert summary["limit"] == "max_tokens"
    assert trajectories()[0]["outcome"] == "failure"


def test_candidates_print_a_table_and_apply_the_best_attempt(
    buggy_repo: Path, server, agent_env: dict[str, str]
) -> None:
    with chat_endpoint(SOLVE) as llm:
        env = {**agent_env, "OPENAI_BASE_URL": f"{llm.url}/v1"}
        out = run_agent(server, env, "fix add", "--workspace", str(buggy_repo), "--model", "openai:q", "--candidates",
                        "2", "--parallel", "2", "--no-stream", timeout=240)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "*  1   1.00     2/2" in out.stdout
    assert "   2   1.00     2/2" in out.stdout
    assert "applied attempt 1: calc.py" in out.stdout
    assert "a + b" in (buggy_repo / "calc.py").read_text()


def test_an_anthropic_model_solves_through_the_messages_api(
    buggy_repo: Path, server, agent_env: dict[str, str], trajectories
) -> None:
    with messages_endpoint(SOLVE) as llm:
        env = {**agent_env, "ANTHROPIC_BASE_URL": llm.url, "ANTHROPIC_API_KEY": "sk-ant-scripted"}
        out = run_agent(
            server, env, "fix add", "--workspace", str(buggy_repo), "--model", "anthropic:claude-x", "--json"
        )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["outcome"] == "success"
    assert {r["path"] for r in llm.requests} == {"/v1/messages"}
    assert trajectories()[0]["outcome"] == "success"


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_an_openai_model_solves_through_the_responses_api(
    buggy_repo: Path, server, agent_env: dict[str, str], trajectories, stream: str
) -> None:
    with responses_endpoint(SOLVE) as llm:
        env = {**agent_env, "OPENAI_BASE_URL": f"{llm.url}/v1", "OPENAI_API_KEY": "sk-scripted"}
        out = run_agent(server, env, "fix add", "--workspace", str(buggy_repo), "--model", "openai-responses:gpt-x",
                        "--json", stream)  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["outcome"] == "success"
    assert summary["requests"] == 4
    assert summary["tokens"] == 4 * 60
    assert {r["path"] for r in llm.requests} == {"/v1/responses"}
    assert all(bool(r.get("stream")) == (stream == "--stream") for r in llm.requests)
    tools = {t["name"] for t in llm.requests[0]["tools"] if t.get("type") == "function"}
    assert {"run_tests", "apply_patch", "search_skills", "read_file"} <= tools
    # the function call's output went back to the model, and its final message ended the run
    outputs = [i for i in llm.requests[1]["input"] if i.get("type") == "function_call_output"]
    assert len(outputs) == 1
    assert json.loads(outputs[0]["output"])["status"] == "failed"
    [traj] = trajectories()
    assert traj["outcome"] == "success"
    assert traj["steps"][-1]["content"] == "fixed add"
    assert [s["tool"] for s in traj["steps"] if s.get("tool")] == ["run_tests", "search_skills", "run_tests",
                                                                   "apply_patch", "run_tests"]  # fmt: skip


def test_a_key_the_provider_refuses_is_one_line_naming_the_key_variable(
    buggy_repo: Path, server, agent_env: dict[str, str]
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        env = {**agent_env, "OPENAI_BASE_URL": f"http://127.0.0.1:{httpd.server_address[1]}/v1"}
        out = run_agent(server, env, "fix", "--workspace", str(buggy_repo), "--model", "openai-chat:q", "--no-stream")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert out.returncode == 2, out.stdout + out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("skillbank: error: the model 'openai-chat:q' refused the key")
    assert last.endswith("check OPENAI_API_KEY")
    assert "Traceback" not in out.stderr


def test_a_test_id_whose_file_does_not_exist_is_refused_before_the_model_runs(
    buggy_repo: Path, server, agent_env: dict[str, str]
) -> None:
    with chat_endpoint(["unused"]) as llm:
        env = {**agent_env, "OPENAI_BASE_URL": f"{llm.url}/v1"}
        out = run_agent(server, env, "fix", "--workspace", str(buggy_repo), "--model", "openai-chat:q",
                        "--test", "test_calc.py::test_add", "--test", "test_nope.py::test_x")  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.strip() == (
        "skillbank: error: --test: tests[1] 'test_nope.py::test_x': 'test_nope.py' does not exist in the workspace; "
        "use a path relative to the workspace root (list the tests directory to find it)"
    )
    assert llm.requests == []
