"""What happens when a trajectory closes: skill confidences follow its outcome, and (optionally) it is distilled.

`on_close_callbacks(skills, trajectories, settings)` is what `services.build_deps` passes to `SessionCapture` as
`on_close`. The capture runs the callbacks in its worker thread, one trajectory at a time, so none of this blocks
a tool call.

- Outcomes: every closed trajectory not counted yet moves the counters of the skills it was shown
  (`skills_store.distill.outcomes.apply_outcomes`). The pass is driven by the store's processing marks, not by the
  trajectory at hand, so a close that happens before the skill bank has opened is not lost: the next close (or
  `skillbank distill`) counts it.
- Distillation, when `settings.distill_on_close` is on: one heuristic pass over the pending trajectories. When
  another process is already distilling, this pass is skipped (that one picks them up).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_server.settings import Settings
from skills_store.distill.heuristic import HeuristicDistiller
from skills_store.distill.outcomes import Busy, apply_outcomes
from skills_store.distill.runner import distill_pending
from skills_store.models import Trajectory
from skills_store.protocols import TrajectoryStore

if TYPE_CHECKING:
    from mcp_server.lazy import LazySkillBank

log = logging.getLogger(__name__)


class OutcomeHooks:
    """The on_close callbacks of one server; see the module doc."""

    def __init__(
        self, skills: LazySkillBank, trajectories: TrajectoryStore, *, distill: bool = False, review: bool = False
    ) -> None:
        self.skills = skills
        self.trajectories = trajectories
        self.distill = distill
        self.review = review
        """New skills are stored as candidates awaiting `skills approve` (`SKILLBANK_REVIEW`)."""
        self.distiller = HeuristicDistiller()

    def apply_outcomes(self, traj: Trajectory) -> None:
        bank = self.skills.get_nowait()
        if bank is None:
            log.info("skill bank not open yet; the outcome of %s is counted on a later pass", traj.trajectory_id)
            return
        report = apply_outcomes(self.trajectories, bank)
        if report.trajectories:
            log.info("outcomes of %d trajectories moved %d skills", report.trajectories, report.skills)

    def distill_closed(self, traj: Trajectory) -> None:
        bank = self.skills.get_nowait()
        if bank is None:
            log.info("skill bank not open yet; %s is distilled on a later pass", traj.trajectory_id)
            return
        try:
            report = distill_pending(self.trajectories, bank, self.distiller, wait=False, review=self.review)
        except Busy:
            log.info("another process is distilling; %s is left to it", traj.trajectory_id)
            return
        if report.trajectories:
            log.info("background distill: %s", report.summary())

    def callbacks(self) -> list[Callable[[Trajectory], None]]:
        out: list[Callable[[Trajectory], None]] = [self.apply_outcomes]
        if self.distill:
            out.append(self.distill_closed)
        return out


def on_close_callbacks(
    skills: LazySkillBank, trajectories: TrajectoryStore, settings: Settings
) -> list[Callable[[Trajectory], None]]:
    """The callbacks for `SessionCapture(on_close=...)`: outcomes always, the heuristic pass when configured."""
    hooks = OutcomeHooks(skills, trajectories, distill=settings.distill_on_close, review=bool(settings.review))
    return hooks.callbacks()
