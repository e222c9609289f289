"""One distillation pass: pending trajectories -> drafts -> merged -> marked processed, nothing repeated."""

from __future__ import annotations

from collections.abc import Sequence

from skills_store.distill.heuristic import HeuristicDistiller
from skills_store.distill.runner import DistillResult, distill_pending
from skills_store.models import Skill, Trajectory


def test_a_pass_stores_the_skills_and_marks_the_trajectories_processed(hash_bank, steps, save, traj_store) -> None:
    save(steps.typo_fix("t1"))
    save(steps.trajectory(tid="t2"))
    report = distill_pending(traj_store, hash_bank, HeuristicDistiller())
    assert (report.trajectories, report.drafts, len(report.added)) == (2, 1, 1)
    assert hash_bank.get(report.added[0]).sources == ["t1"]
    assert traj_store.pending_for("heuristic") == []
    again = distill_pending(traj_store, hash_bank, HeuristicDistiller())
    assert (again.trajectories, again.drafts) == (0, 0)
    assert hash_bank.count() == 1


def test_the_same_lesson_from_two_sessions_becomes_one_skill_with_both_sources(
    hash_bank, steps, save, traj_store
) -> None:
    save(steps.typo_fix("t1"))
    save(steps.typo_fix("t2"))
    report = distill_pending(traj_store, hash_bank, HeuristicDistiller(), batch=1)
    assert (len(report.added), len(report.merged)) == (1, 1)
    [skill] = hash_bank.list_skills()
    assert skill.sources == ["t1", "t2"]


def test_open_trajectories_wait_and_the_limit_is_respected(hash_bank, steps, save, traj_store) -> None:
    save(steps.typo_fix("open"), close=False)
    for i in range(3):
        save(steps.trajectory(tid=f"c{i}"))
    progress: list[int] = []
    report = distill_pending(traj_store, hash_bank, HeuristicDistiller(), batch=1, limit=2, progress=progress.append)
    assert report.trajectories == 2
    assert progress == [1, 1]
    assert [t.trajectory_id for t in traj_store.pending_for("heuristic")] == ["c2"]


class HalfDistiller:
    """Finishes the first trajectory of each batch only, then says why it stopped."""

    name = "half"

    def distill(self, trajectories: Sequence[Trajectory]) -> list[Skill]:
        return self.distill_batch(trajectories).drafts

    def distill_batch(self, trajectories: Sequence[Trajectory]) -> DistillResult:
        return DistillResult([], [trajectories[0].trajectory_id], stopped="budget spent", tokens=7)


def test_a_distiller_that_stops_early_leaves_the_rest_pending(hash_bank, steps, save, traj_store) -> None:
    for i in range(3):
        save(steps.trajectory(tid=f"t{i}"))
    report = distill_pending(traj_store, hash_bank, HalfDistiller())
    assert (report.trajectories, report.stopped, report.tokens) == (1, "budget spent", 7)
    assert [t.trajectory_id for t in traj_store.pending_for("half")] == ["t1", "t2"]
    assert "stopped early: budget spent" in report.summary()
    assert len(traj_store.pending_for("heuristic")) == 3


def test_agent_steps_of_the_wrong_shape_do_not_break_distillation(hash_bank, steps, save, traj_store) -> None:
    from skills_store.models import StoredStep, utcnow

    odd = steps.trajectory(tid="odd")
    odd.steps.append(
        StoredStep(
            index=len(odd.steps), ts=utcnow(), kind="tool_call", tool="run_tests",
            result={"status": "failed", "failures": 5, "failing": "x"}, args={"tests": 3},
        )
    )  # fmt: skip
    odd.steps.append(
        StoredStep(index=len(odd.steps), ts=utcnow(), kind="tool_call", tool="apply_patch", result={"files": 1})
    )
    save(odd)
    save(steps.typo_fix("later"))
    report = distill_pending(traj_store, hash_bank, HeuristicDistiller())
    assert report.trajectories == 2
    assert hash_bank.get(report.added[0]).sources == ["later"]


class BrokenOnOne(HeuristicDistiller):
    def distill_batch(self, trajectories: Sequence[Trajectory]) -> DistillResult:
        if any(t.trajectory_id == "poison" for t in trajectories):
            raise ValueError("cannot read this one")
        return super().distill_batch(trajectories)


def test_a_trajectory_the_heuristic_distiller_fails_on_is_skipped_not_retried_forever(
    hash_bank, steps, save, traj_store
) -> None:
    save(steps.trajectory(tid="poison"))
    save(steps.typo_fix("good"))
    report = distill_pending(traj_store, hash_bank, BrokenOnOne())
    assert report.skipped == ["poison"]
    assert report.trajectories == 2
    assert hash_bank.get(report.added[0]).sources == ["good"]
    assert "skipped 1" in report.summary()
    assert traj_store.pending_for("heuristic") == []


class FlakyModel(BrokenOnOne):
    name = "flaky-llm"
    deterministic = False


def test_a_model_distiller_that_fails_stops_the_pass_and_leaves_the_trajectory_pending(
    hash_bank, steps, save, traj_store
) -> None:
    save(steps.trajectory(tid="poison"))
    save(steps.typo_fix("good"))
    report = distill_pending(traj_store, hash_bank, FlakyModel())
    assert report.stopped is not None
    assert "poison" in report.stopped
    assert [t.trajectory_id for t in traj_store.pending_for("flaky-llm")] == ["poison", "good"]


def test_under_review_new_skills_are_stored_as_candidates_that_search_does_not_return(
    hash_bank, steps, save, traj_store
) -> None:
    save(steps.typo_fix("t1"))
    [skill_id] = distill_pending(traj_store, hash_bank, HeuristicDistiller(), review=True).added
    skill = hash_bank.get(skill_id)
    assert skill.status == "candidate"
    assert hash_bank.search(skill.pattern, 5) == []
    hash_bank.approve(skill_id)
    assert [h.skill.skill_id for h in hash_bank.search(skill.pattern, 5)] == [skill_id]


def test_without_review_new_skills_are_active(hash_bank, steps, save, traj_store) -> None:
    save(steps.typo_fix("t1"))
    [skill_id] = distill_pending(traj_store, hash_bank, HeuristicDistiller()).added
    assert hash_bank.get(skill_id).status == "active"
