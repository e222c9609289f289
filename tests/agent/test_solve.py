"""`agent.solve`: a scripted model fixes a real bug through the real `skillbank serve` over stdio."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent.run import Limits, solve
from tests.agent.support import FIX, scripted

pytestmark = [pytest.mark.anyio]


def tools_of(trajectory: dict) -> list[str]:
    return [s["tool"] for s in trajectory["steps"] if s.get("tool")]


async def test_a_scripted_solve_fixes_the_bug_and_its_trajectory_shows_every_step(
    buggy_repo: Path, server, trajectories
) -> None:
    model = scripted([
        [("run_tests", {})],
        [("search_skills", {"query": "assert -1 == 5 where -1 = add(2, 3)"})],
        [("read_file", {"path": "calc.py"})],
        [("apply_patch", {"patch": FIX})],
        [("run_tests", {})],
        "add subtracted; it adds now.",
    ])  # fmt: skip
    lines: list[str] = []
    with anyio.fail_after(120):
        result = await solve("make test_add pass", buggy_repo, model, server=server, progress=lines.append)
    assert result.outcome == "success"
    assert result.reward == 1.0
    assert result.tests is not None
    assert result.tests.passed == 2
    assert result.requests == 6
    assert result.message == "add subtracted; it adds now."
    assert "+    return a + b" in result.final_diff
    assert "a + b" in (buggy_repo / "calc.py").read_text()
    assert any(line.startswith("apply_patch") and "applied" in line for line in lines)
    [traj] = trajectories()
    assert traj["trajectory_id"] == result.trajectory_id
    assert traj["task"] == "make test_add pass"
    assert traj["outcome"] == "success"
    assert traj["status"] == "closed"
    # the harness's first run and skill search, then the model's five calls in order
    assert tools_of(traj) == ["run_tests", "search_skills", "run_tests", "search_skills", "read_file", "apply_patch",
                              "run_tests"]  # fmt: skip
    assert traj["steps"][-1]["content"] == "add subtracted; it adds now."
    assert any(s["kind"] == "thought" and s.get("tokens_out") for s in traj["steps"])


async def test_the_first_failure_is_in_the_prompt(buggy_repo: Path, server) -> None:
    model = scripted(["nothing to do"])
    with anyio.fail_after(120):
        result = await solve("fix add", buggy_repo, model, server=server)
    prompt = str(model.seen[0][-1].parts[-1].content)  # type: ignore[attr-defined]
    assert "Task: fix add" in prompt
    assert "test_calc.py::test_add" in prompt
    assert "assert -1 == 5" in prompt
    assert result.outcome == "failure"
    assert result.tests is not None
    assert result.tests.failed == 1
    assert result.final_diff == ""


async def test_hitting_the_request_limit_ends_the_run_as_a_failure_that_names_it(
    buggy_repo: Path, server, trajectories
) -> None:
    model = scripted([[("list_files", {})]] * 10)
    with anyio.fail_after(120):
        result = await solve("fix add", buggy_repo, model, server=server, limits=Limits(max_requests=2))
    assert result.outcome == "failure"
    assert result.limit == "max_requests"
    assert "request limit (2)" in result.message
    assert result.requests == 2
    [traj] = trajectories()
    assert traj["outcome"] == "failure"
    assert "request limit" in traj["steps"][-1]["content"]


async def test_the_timeout_ends_a_stuck_run_as_a_failure_that_names_it(buggy_repo: Path, server, trajectories) -> None:
    never = anyio.Event()

    async def stuck(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await never.wait()
        raise AssertionError("unreachable")

    with anyio.fail_after(120):
        result = await solve("fix add", buggy_repo, FunctionModel(stuck), server=server, limits=Limits(timeout_s=8))
    assert result.outcome == "failure"
    assert result.limit == "timeout"
    assert "timeout (8.0 s)" in result.message
    [traj] = trajectories()
    assert traj["status"] == "closed"
    assert traj["outcome"] == "failure"


async def test_a_models_run_of_another_command_does_not_decide_the_outcome(
    buggy_repo: Path, server, trajectories
) -> None:
    """`run_tests(command="true")` passes; the model's run of the suite before it, which failed, decides."""
    model = scripted([
        [("run_tests", {})],
        [("run_tests", {"command": "true"})],
        "all green.",
    ])  # fmt: skip
    with anyio.fail_after(120):
        result = await solve("make test_add pass", buggy_repo, model, server=server)
    assert result.outcome == "failure"
    assert result.reward < 1.0
    assert result.tests is not None
    assert result.tests.failed == 1
    [traj] = trajectories()
    assert traj["outcome"] == "failure"
    runs = [s["args"].get("command") for s in traj["steps"] if s.get("tool") == "run_tests"]
    assert runs == [None, None, "true"]  # the harness's first run, the model's two


async def test_after_a_patch_a_models_run_of_a_few_tests_is_followed_by_the_harness_run(
    buggy_repo: Path, server, trajectories
) -> None:
    model = scripted([
        [("apply_patch", {"patch": FIX})],
        [("run_tests", {"command": "true"})],
        [("run_tests", {"tests": ["test_calc.py::test_add"]})],
        "fixed.",
    ])  # fmt: skip
    with anyio.fail_after(120):
        result = await solve("make test_add pass", buggy_repo, model, server=server)
    assert result.outcome == "success"
    assert result.tests is not None
    assert result.tests.passed == 2  # the whole suite, run by the harness at the end
    [traj] = trajectories()
    runs = [(s["args"].get("command"), s["args"].get("tests")) for s in traj["steps"] if s.get("tool") == "run_tests"]
    assert runs == [(None, None), ("true", None), (None, ["test_calc.py::test_add"]), (None, None)]


async def test_a_long_task_and_a_runaway_reply_are_cut_for_the_trajectory_not_a_crash(
    buggy_repo: Path, server, trajectories
) -> None:
    task = "make test_add pass. The log:\n" + "E   AssertionError: something\n" * 1000  # 30 KB, over the 20,000 kept
    reply = "x" * 1_200_000  # over the 1,000,000 characters a step keeps
    model = scripted([[("apply_patch", {"patch": FIX})], reply])
    with anyio.fail_after(120):
        result = await solve(task, buggy_repo, model, server=server)
    assert result.outcome == "success"
    [traj] = trajectories()
    assert len(traj["task"]) <= 20_000
    assert "characters truncated" in traj["task"]
    assert traj["task"].startswith("make test_add pass.")
    assert max(len(s["content"]) for s in traj["steps"]) <= 1_000_000
    assert any("characters truncated" in s["content"] for s in traj["steps"])


async def test_a_misnamed_tool_or_an_empty_reply_now_and_then_does_not_end_the_run(buggy_repo: Path, server) -> None:
    # a small model calls a tool that does not exist and answers with nothing, twice each over its run (pydantic-ai's
    # default budget of one retry per run ended it at the second, with an error, though it went on to fix the bug)
    model = scripted([
        [("bash", {"cmd": "cat calc.py"})],
        "",
        [("read_file", {"path": "calc.py"})],
        [("edit_file", {"path": "calc.py"})],
        "",
        [("apply_patch", {"patch": FIX})],
        [("run_tests", {})],
        "fixed",
    ])  # fmt: skip
    with anyio.fail_after(120):
        result = await solve("fix add", buggy_repo, model, server=server)
    assert result.error is None
    assert result.outcome == "success"
    assert result.message == "fixed"


async def test_a_model_that_only_ever_misnames_tools_still_ends_before_the_request_limit(
    buggy_repo: Path, server
) -> None:
    model = scripted([[("bash", {"cmd": "ls"})]] * 40)
    with anyio.fail_after(120):
        result = await solve("fix add", buggy_repo, model, server=server, limits=Limits(max_requests=40))
    assert result.outcome == "failure"
    assert result.error is not None
    assert "bash" in result.error
    assert result.requests < 40


async def test_a_server_that_dies_mid_run_ends_it_as_a_failure_naming_that_not_a_traceback(
    buggy_repo: Path, server
) -> None:
    import os
    import signal
    import subprocess

    def kill_the_server() -> None:
        kids = subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout.split()
        for pid in kids:
            if "serve" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                os.kill(int(pid), signal.SIGKILL)

    turns = [[("apply_patch", {"patch": FIX})], [("run_tests", {})], "fixed"]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 3:  # after the patch landed: the server is killed (OOM, a stray kill)
            kill_the_server()
        turn = turns[min(len(messages) // 2, len(turns) - 1)]
        if isinstance(turn, str):
            return ModelResponse(parts=[TextPart(turn)])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in turn])

    with anyio.fail_after(120):
        result = await solve("fix add", buggy_repo, FunctionModel(respond), server=server)
    assert result.outcome == "failure"
    assert result.error is not None
    assert result.error.startswith("ServerLost:")
    assert "a + b" in (buggy_repo / "calc.py").read_text()  # what landed stays, and the diff says so
    assert "+    return a + b" in result.final_diff
