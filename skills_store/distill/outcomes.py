"""Confidence from outcomes: when a trajectory that was shown skills closes, their counters move.

The rule (documented in docs/distillation.md): a skill carries its distiller's prior confidence `p` and counts of
`successes` and `failures` of the trajectories it was shown to. Its confidence is the mean of the Beta posterior
whose prior is Beta(p * 2, (1 - p) * 2) (`posterior_confidence`, two pseudo-observations):

    confidence = (2p + successes) / (2 + successes + failures)

A trajectory closed with `success` adds one success to every skill it was shown and *used* (`credit.credited`:
named in `used_skills`, or a skill whose edit rule a later patch of the session applied), `failure` one failure;
`abandoned` (or no outcome) moves nothing. Skills shown but not used move nothing (`OutcomeReport.unused`), nor do
skills named in `used_skills` that the session was never shown (`OutcomeReport.unshown`, logged).

Application is driven by the trajectory store's processing marks (`pending_for("outcomes")`), under a file lock
shared by every process using the same data dir, so each closed trajectory moves the counters exactly once: a
trajectory that closed while the skill bank was not open yet is picked up by the next pass (the next close, or
`skillbank distill`). A crash between updating the skills and marking the trajectory could count it twice; that
window is one SQLite transaction wide.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

from skills_store.distill.credit import credited, unshown_used
from skills_store.protocols import TrajectoryStore

if TYPE_CHECKING:
    from skills_store.bank import SkillBank

log = logging.getLogger(__name__)

#: The processing mark that `apply_outcomes` sets on the trajectories it has counted.
OUTCOMES = "outcomes"


@dataclass
class OutcomeReport:
    trajectories: int = 0
    """Closed trajectories taken out of the pending list (with or without skills to move)."""
    successes: dict[str, int] = field(default_factory=dict)
    """skill id -> successes added in this pass."""
    failures: dict[str, int] = field(default_factory=dict)
    unused: dict[str, int] = field(default_factory=dict)
    """skill id -> sessions that were shown it, closed with an outcome, and did not use it (counters unmoved)."""
    unshown: dict[str, int] = field(default_factory=dict)
    """skill id -> sessions closed with an outcome that named it in `used_skills` but were never shown it
    (ignored: counters unmoved)."""

    @property
    def skills(self) -> int:
        return len(set(self.successes) | set(self.failures))


class Busy(Exception):
    """Another thread or process holds the lock and the caller chose not to wait."""


@contextmanager
def file_lock(path: Path, *, wait: bool = True) -> Iterator[None]:
    """An exclusive lock on `path` across processes (and threads: each call opens its own descriptor)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path)
    try:
        lock.acquire(blocking=wait)
    except Timeout:
        raise Busy(str(path)) from None
    try:
        yield
    finally:
        lock.release()


def lock_path(bank: SkillBank) -> Path:
    return bank.catalog.path.with_name(".outcomes.lock")


def apply_outcomes(store: TrajectoryStore, bank: SkillBank, *, batch: int = 200) -> OutcomeReport:
    """Count the outcome of every closed trajectory not counted yet into the skills it was shown."""
    report = OutcomeReport()
    with file_lock(lock_path(bank)):
        while True:
            pending = store.pending_for(OUTCOMES, limit=batch)
            if not pending:
                return report
            for traj in pending:
                counted = traj.outcome in ("success", "failure")
                used = credited(traj, bank) if counted else []
                for skill_id in traj.skills_shown if counted else []:
                    if skill_id not in used:
                        report.unused[skill_id] = report.unused.get(skill_id, 0) + 1
                unshown = unshown_used(traj) if counted else []
                if unshown:
                    log.info(
                        "trajectory %s named skills it was never shown as used; no credit: %s",
                        traj.trajectory_id,
                        ", ".join(unshown),
                    )
                for skill_id in unshown:
                    report.unshown[skill_id] = report.unshown.get(skill_id, 0) + 1
                if used:
                    success = traj.outcome == "success"
                    moved = bank.record_outcome(used, success)
                    tally = report.successes if success else report.failures
                    for skill in moved:
                        tally[skill.skill_id] = tally.get(skill.skill_id, 0) + 1
                store.mark_processed([traj.trajectory_id], OUTCOMES)
                report.trajectories += 1
