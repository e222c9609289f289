"""Credit goes only to skills the session was shown: `used_skills` naming any other skill is ignored."""

from __future__ import annotations

import pytest

from skills_store.distill.credit import credited, unshown_used
from skills_store.distill.outcomes import apply_outcomes
from skills_store.skill_md import render


def test_a_skill_named_as_used_but_never_shown_moves_nothing_and_is_reported(
    hash_bank, skill_factory, steps, save, traj_store
) -> None:
    hash_bank.upsert([
        skill_factory("shown", "Shown", "KeyError: '<name>'", confidence=0.6),
        skill_factory("never", "Never shown", "IndexError: list index out of range", confidence=0.6),
    ])  # fmt: skip
    save(steps.trajectory(tid="t1", outcome="success"), shown=["shown"], used=["never", "shown"])
    traj = traj_store.get("t1")
    assert credited(traj, hash_bank) == ["shown"]
    assert unshown_used(traj) == ["never"]
    report = apply_outcomes(traj_store, hash_bank)
    assert report.successes == {"shown": 1}
    assert report.unshown == {"never": 1}
    assert (hash_bank.get("never").successes, hash_bank.get("never").confidence) == (0, 0.6)


@pytest.mark.parametrize("outcome", ["success", "failure"])
def test_ten_empty_sessions_naming_an_unshown_skill_leave_its_confidence_and_export_alone(
    outcome, hash_bank, skill_factory, steps, save, traj_store
) -> None:
    hash_bank.upsert([
        skill_factory("target", "Target", "ModuleNotFoundError: No module named '<name>'", confidence=0.8),
        skill_factory("float", "Float equality", "AssertionError: assert <n> == <n>", confidence=0.7),
    ])  # fmt: skip
    for i in range(10):
        save(steps.trajectory(tid=f"t{i}", outcome=outcome), shown=["float"], used=["target"])
    report = apply_outcomes(traj_store, hash_bank)
    assert report.unshown == {"target": 10}
    assert report.successes == report.failures == {}
    target = hash_bank.get("target")
    assert (target.successes, target.failures, target.confidence) == (0, 0, 0.8)
    assert "0 successes and 0 failures in sessions that were shown it); shown 0 times" in render(target)


def test_a_skill_shown_and_named_by_a_session_is_credited_once(
    hash_bank, skill_factory, steps, save, traj_store
) -> None:
    hash_bank.upsert([skill_factory("s", "S", "KeyError: '<name>'", confidence=0.6)])
    save(steps.trajectory(tid="t1", outcome="failure"), shown=["s"], used=["s", "s"])
    report = apply_outcomes(traj_store, hash_bank)
    assert (report.failures, report.unshown) == ({"s": 1}, {})
    assert hash_bank.get("s").failures == 1
