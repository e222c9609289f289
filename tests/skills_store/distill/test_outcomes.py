"""Confidence follows outcomes: each closed trajectory moves the skills it was shown, exactly once."""

from __future__ import annotations

import threading

import pytest

from skills_store.distill.outcomes import OUTCOMES, apply_outcomes
from skills_store.models import posterior_confidence


def seed(bank, skill_factory) -> None:
    bank.upsert(
        [
            skill_factory("helpful", "Helpful", "KeyError: '<name>'", confidence=0.6),
            skill_factory("unhelpful", "Unhelpful", "IndexError: list index out of range", confidence=0.6),
        ]
    )


def test_a_successful_trajectory_raises_the_confidence_of_the_skills_it_was_shown(
    hash_bank, skill_factory, steps, save, traj_store
) -> None:
    seed(hash_bank, skill_factory)
    save(steps.trajectory(tid="t1", outcome="success"), shown=["helpful"])
    report = apply_outcomes(traj_store, hash_bank)
    skill = hash_bank.get("helpful")
    assert (skill.successes, skill.failures) == (1, 0)
    assert skill.confidence == posterior_confidence(0.6, 1, 0) == pytest.approx((0.6 * 2 + 1) / (2 + 1))
    assert hash_bank.get("unhelpful").confidence == 0.6
    assert (report.trajectories, report.successes) == (1, {"helpful": 1})


def test_a_failed_trajectory_lowers_it_following_the_beta_posterior(
    hash_bank, skill_factory, steps, save, traj_store
) -> None:
    seed(hash_bank, skill_factory)
    for i in range(3):
        save(steps.trajectory(tid=f"t{i}", outcome="failure"), shown=["unhelpful"])
    apply_outcomes(traj_store, hash_bank)
    skill = hash_bank.get("unhelpful")
    assert (skill.successes, skill.failures) == (0, 3)
    assert skill.confidence == pytest.approx((0.6 * 2 + 0) / (2 + 3))
    assert skill.prior == 0.6


def test_abandoned_trajectories_move_nothing_but_are_taken_off_the_pending_list(
    hash_bank, skill_factory, steps, save, traj_store
) -> None:
    seed(hash_bank, skill_factory)
    save(steps.trajectory(tid="t1", outcome="abandoned"), shown=["helpful"])
    assert apply_outcomes(traj_store, hash_bank).trajectories == 1
    assert hash_bank.get("helpful").confidence == 0.6
    assert traj_store.pending_for(OUTCOMES) == []


def test_each_outcome_is_counted_once_however_often_the_pass_runs(
    hash_bank, skill_factory, steps, save, traj_store
) -> None:
    seed(hash_bank, skill_factory)
    save(steps.trajectory(tid="t1"), shown=["helpful"])
    apply_outcomes(traj_store, hash_bank)
    assert apply_outcomes(traj_store, hash_bank).trajectories == 0
    assert hash_bank.get("helpful").successes == 1


def test_concurrent_passes_count_each_outcome_once(hash_bank, skill_factory, steps, save, traj_store) -> None:
    seed(hash_bank, skill_factory)
    for i in range(10):
        save(steps.trajectory(tid=f"t{i}"), shown=["helpful", "unhelpful"])
    threads = [threading.Thread(target=apply_outcomes, args=(traj_store, hash_bank)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert hash_bank.get("helpful").successes == 10
    assert hash_bank.get("unhelpful").successes == 10


def test_an_open_trajectory_waits_until_it_closes(hash_bank, skill_factory, steps, save, traj_store) -> None:
    seed(hash_bank, skill_factory)
    tid = save(steps.trajectory(tid="t1"), shown=["helpful"], close=False)
    assert apply_outcomes(traj_store, hash_bank).trajectories == 0
    traj_store.close_trajectory(tid, "success")
    assert apply_outcomes(traj_store, hash_bank).trajectories == 1
    assert hash_bank.get("helpful").successes == 1


def test_skills_deleted_since_they_were_shown_are_skipped(hash_bank, skill_factory, steps, save, traj_store) -> None:
    seed(hash_bank, skill_factory)
    save(steps.trajectory(tid="t1"), shown=["gone", "helpful"])
    report = apply_outcomes(traj_store, hash_bank)
    assert report.successes == {"helpful": 1}
