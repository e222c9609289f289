"""A pass of selected tests after a failure they left out proves nothing: not `success`, not a reward of 1.0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skills_store.models import Step
from skills_store.trajectories.closing import close_with_inferred_outcome
from skills_store.trajectories.evidence import evidence, solved_reward
from skills_store.trajectories.store import SQLiteTrajectoryStore
from skills_store.trajectories.trl_export import export_lines, reward_of

TOTAL = "tests/test_calc.py::test_total"
TRIVIAL = "tests/test_calc.py::test_trivial"


@pytest.fixture
def store(tmp_path: Path):
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as s:
        yield s


def run(status: str, failing: list[str] = (), tests: list[str] | None = None, reward: float | None = None, **counts):
    """A `run_tests` step as the capture stores it."""
    result: dict[str, Any] = {
        "status": status,
        "passed": counts.get("passed", 1),
        "failed": counts.get("failed", len(failing)),
        "errors": 0,
        "failing": list(failing),
        "failures": [
            {"id": f, "message": "AttributeError: 'dict' object has no attribute 'iteritems'"} for f in failing
        ],
        "backend": "local",
    }
    if reward is not None:
        result["reward"] = reward
    args = {"tests": tests, "command": None, "timeout_s": 600, "backend": "auto"}
    return Step(kind="tool_call", tool="run_tests", args=args, result=result, ok=status == "passed")


def session(store, *runs: Step, task: str = "fix test_total") -> str:
    """An open trajectory holding `runs`, its reward the last run's (as the capture sets it)."""
    tid = store.create(task=task).trajectory_id
    store.append(tid, list(runs))
    last = runs[-1].result["reward"] if "reward" in runs[-1].result else 1.0 if runs[-1].ok else 0.0
    store.update(tid, reward=last)
    return tid


def test_a_server_closed_session_whose_last_run_passed_an_unrelated_test_is_a_failure(store) -> None:
    tid = session(store, run("failed", [TOTAL], reward=0.7), run("passed", tests=[TRIVIAL], reward=1.0))
    closed = close_with_inferred_outcome(store, tid, "session ended (the client disconnected) without final=true")
    assert closed is not None
    assert closed.outcome == "failure"
    note = store.get(tid).steps[-1].content
    assert f"passed only the selected tests ({TRIVIAL}), but {TOTAL} failed in an earlier run" in note
    assert reward_of(store.get(tid)) == 0.7  # the whole-suite run's, not the subset's 1.0


@pytest.mark.parametrize(
    "selection", [TOTAL, "tests/test_calc.py", "tests", "./tests/", "tests/test_calc.py::test_total[1]"]
)
def test_a_pass_of_selected_tests_that_include_every_earlier_failure_is_a_success(store, selection) -> None:
    failing = "tests/test_calc.py::test_total[1]" if selection.endswith("[1]") else TOTAL
    tid = session(store, run("failed", [failing], reward=0.7), run("passed", tests=[selection], reward=1.0))
    assert close_with_inferred_outcome(store, tid, "session ended").outcome == "success"
    assert reward_of(store.get(tid)) == 1.0


def test_a_whole_suite_pass_proves_everything_and_a_later_unrelated_pass_keeps_it(store) -> None:
    tid = session(
        store,
        run("failed", [TOTAL], reward=0.7),
        run("passed", reward=1.0),
        run("passed", tests=[TRIVIAL], reward=1.0),
    )
    assert close_with_inferred_outcome(store, tid, "session ended").outcome == "success"


def test_only_selected_runs_that_never_failed_are_a_success(store) -> None:
    tid = session(store, run("passed", tests=[TRIVIAL], reward=1.0))
    assert close_with_inferred_outcome(store, tid, "session ended").outcome == "success"


def test_failures_left_unlisted_stay_unproven_until_their_selection_passes_again(store) -> None:
    listed = [f"tests/test_a.py::test_{i}" for i in range(20)]
    whole = run("failed", listed, failed=25, reward=0.3)
    traj_ids = [
        session(store, whole, run("passed", tests=["tests/test_a.py"], reward=1.0)),
        session(store, whole, run("passed", reward=1.0)),
    ]
    outcomes = [close_with_inferred_outcome(store, t, "session ended").outcome for t in traj_ids]
    assert outcomes == ["failure", "success"]
    assert "the whole suite failed in an earlier run" in store.get(traj_ids[0]).steps[-1].content


def test_a_run_that_errored_leaves_its_selection_unproven(store) -> None:
    tid = session(store, run("error", tests=["tests/test_b.py"], reward=0.0), run("passed", tests=[TRIVIAL]))
    found = evidence(store.get(tid))
    assert (found.last_pass_unproven, found.unproven) == (True, ["tests/test_b.py"])


def test_steps_stored_without_a_run_reward_give_an_unproven_pass_no_reward(store) -> None:
    tid = session(store, run("failed", [TOTAL]), run("passed", tests=[TRIVIAL]))
    store.close_trajectory(tid, "success")  # the agent's word stands; the record's reward does not say solved
    traj = store.get(tid)
    assert (traj.outcome, traj.reward, solved_reward(traj)) == ("success", 1.0, 0.0)
    [line] = export_lines([traj], "trl")
    assert '"reward": 0.0' in line


def test_a_session_without_captured_runs_is_judged_by_its_reward_as_before(store) -> None:
    tid = store.create(task="claude").trajectory_id
    store.append(tid, [Step(kind="tool_call", tool="Bash", args={"command": "pytest -q"}, ok=True)])
    store.update(tid, reward=1.0)
    assert close_with_inferred_outcome(store, tid, "Claude Code session ended").outcome == "success"
    assert reward_of(store.get(tid)) == 1.0


CALC = {
    "calc.py": "def total(items):\n    return sum(v for _, v in items.iteritems())\n",
    "tests/test_calc.py": (
        "from calc import total\n\n\ndef test_total():\n    assert total({'a': 1, 'b': 2}) == 3\n\n\n"
        "def test_trivial():\n    assert 1 + 1 == 2\n"
    ),
}


FIX = """\
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def total(items):
-    return sum(v for _, v in items.iteritems())
+    return sum(v for _, v in items.items())
"""


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("fixed", "selected", "outcome"),
    [(False, [TRIVIAL], "failure"), (True, [TOTAL], "success"), (True, ["tests/test_calc.py"], "success")],
)
async def test_a_real_session_left_open_after_a_subset_run_is_closed_by_what_its_runs_prove(
    tmp_path: Path, fixed, selected, outcome
) -> None:
    """Through the MCP server: the whole suite fails, then (after the fix or not) a passing run of `selected`."""
    import subprocess
    import sys

    from mcp import Client

    from mcp_server.app import create_server
    from mcp_server.services import build_deps
    from mcp_server.settings import Settings

    repo = tmp_path / "calc"
    for rel, text in CALC.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    settings = Settings(
        home=tmp_path / "home", embedder="hash", starter_skills=False, workspace=repo,
        test_python=sys.executable, sandbox="local", no_skills=True,
    )  # fmt: skip
    deps = build_deps(settings)
    async with Client(create_server(deps)) as client:
        first = await client.call_tool("run_tests", {})
        if fixed:
            assert (await client.call_tool("apply_patch", {"patch": FIX})).structured_content["applied"]
        second = await client.call_tool("run_tests", {"tests": selected})
    await deps.capture.flush()
    assert (first.structured_content["status"], second.structured_content["status"]) == ("failed", "passed")
    [traj] = deps.trajectories.list()
    traj = deps.trajectories.get(traj.trajectory_id)
    assert (traj.status, traj.outcome, traj.reward) == ("closed", outcome, 1.0)
    if outcome == "failure":
        assert "tests/test_calc.py::test_total failed in an earlier run" in traj.steps[-1].content
        assert reward_of(traj) == first.structured_content["reward"]["value"] < 1.0
    else:
        assert reward_of(traj) == 1.0


def test_a_run_that_collected_nothing_changes_nothing_and_dot_is_the_whole_suite(store) -> None:
    nothing = session(store, run("no_tests", passed=0, reward=0.0), run("passed", tests=[TRIVIAL]))
    dot = session(store, run("failed", [TOTAL], failed=30, reward=0.2), run("passed", tests=["."]))
    assert [close_with_inferred_outcome(store, t, "session ended").outcome for t in (nothing, dot)] == [
        "success",
        "success",
    ]
