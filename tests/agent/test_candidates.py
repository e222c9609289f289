"""Best-of-N: attempts on isolated copies, the best by test reward applied to the real workspace as one patch."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest

from agent.candidates import Attempt, best_of_n, choose
from agent.run import AgentRunResult
from tests.agent.support import BUGGY, FIX, SYNTAX_FIX, WRONG_FIX, scripted

pytestmark = [pytest.mark.anyio]


def by_attempt(patches: dict[int, str]):
    return lambda i: scripted([[("apply_patch", {"patch": patches[i]})], "done"])


async def test_best_of_three_picks_the_right_fix_over_a_wrong_one_and_a_syntax_error(
    buggy_repo: Path, server, trajectories
) -> None:
    (buggy_repo / "notes.txt").write_text("uncommitted, kept\n")
    lines: list[str] = []
    with anyio.fail_after(240):
        outcome = await best_of_n("fix add", buggy_repo, by_attempt({1: WRONG_FIX, 2: FIX, 3: SYNTAX_FIX}), 3,
                                  parallel=2, server=server, progress=lines.append)  # fmt: skip
    rewards = {a.index: a.reward for a in outcome.attempts}
    assert outcome.best == 2
    assert rewards[2] == 1.0
    assert rewards[1] < 1.0
    assert rewards[3] < rewards[1]  # a syntax error scores below a wrong but running fix
    assert outcome.applied_files == ["calc.py"]
    assert (buggy_repo / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")
    assert (buggy_repo / "notes.txt").read_text() == "uncommitted, kept\n"
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=buggy_repo, capture_output=True, text=True).stdout
    assert len(worktrees.splitlines()) == 1  # every copy removed
    stored = {t["trajectory_id"]: t for t in trajectories()}
    assert len(stored) == 3
    for attempt in outcome.attempts:
        assert attempt.result is not None
        traj = stored[attempt.result.trajectory_id]
        assert traj["reward"] == attempt.reward
        assert traj["status"] == "closed"
        assert any(f"candidate {attempt.index}/3" in s["content"] for s in traj["steps"] if s["kind"] == "message")
    assert any(line.startswith("[2/3] apply_patch") for line in lines)


async def test_a_folder_that_is_not_a_git_repo_is_copied_and_gets_the_winning_patch(tmp_path: Path, server) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "calc.py").write_text(BUGGY)
    (plain / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    with anyio.fail_after(240):
        outcome = await best_of_n("fix add", plain, by_attempt({1: FIX, 2: WRONG_FIX}), 2, server=server)
    assert outcome.best == 1
    assert "a + b" in (plain / "calc.py").read_text()
    assert not (plain / ".git").exists()


def result(reward: float) -> AgentRunResult:
    return AgentRunResult(outcome="failure", reward=reward, tests=None, tokens=0, input_tokens=0, output_tokens=0,
                          requests=0, tool_calls=0, wall_s=0.0, trajectory_id=None, final_diff="")  # fmt: skip


def test_ties_in_reward_go_to_the_smaller_diff() -> None:
    attempts = [Attempt(index=1, result=result(1.0), diff_lines=9), Attempt(index=2, result=result(1.0), diff_lines=2),
                Attempt(index=3, result=result(0.5), diff_lines=1), Attempt(index=4, error="boom")]  # fmt: skip
    best = choose(attempts)
    assert best is not None
    assert best.index == 2
    assert choose([Attempt(index=1, error="boom")]) is None
