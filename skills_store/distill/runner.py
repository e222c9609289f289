"""One distillation pass: pending closed trajectories -> drafts -> merged into the bank -> marked processed.

`distill_pending` works in batches of `batch` trajectories, oldest closed first. A trajectory is marked processed
by the distiller's name only after its drafts are stored, so an interrupted pass loses nothing and repeats
nothing; a distiller that stops early (the LLM distiller's token budget) leaves the rest pending for the next
pass. Every draft is screened (`screen`) before it is merged: unsafe advice is refused and reported, never stored.
Under review (`review=True`, `SKILLBANK_REVIEW`) new skills are stored as `candidate`s that search never returns
until `skillbank skills approve ID`; a draft merged into an active lesson leaves that lesson active.
Passes of the same distiller are serialised across processes by a file lock in the data dir.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from skills_store.distill.merge import MergeConfig, Merger, merge_into_bank
from skills_store.distill.outcomes import file_lock
from skills_store.distill.screen import screen
from skills_store.models import Skill, Trajectory
from skills_store.protocols import Distiller, TrajectoryStore

if TYPE_CHECKING:
    from skills_store.bank import SkillBank


log = logging.getLogger(__name__)


@dataclass
class DistillResult:
    """What a distiller made of a batch."""

    drafts: list[Skill]
    done: list[str]
    """Ids of the trajectories fully distilled (the others stay pending)."""
    stopped: str | None = None
    """Why the distiller stopped before the end of the batch (a token budget spent), else None."""
    tokens: int = 0
    """Model tokens spent on the batch (0 for the heuristic distiller)."""


class BatchDistiller(Distiller, Protocol):
    """A `Distiller` that also says which trajectories of a batch it finished (what a pass needs)."""

    def distill_batch(self, trajectories: Sequence[Trajectory]) -> DistillResult: ...


@dataclass
class PassReport:
    distiller: str
    trajectories: int = 0
    drafts: int = 0
    added: list[str] = field(default_factory=list)
    merged: list[tuple[str, str]] = field(default_factory=list)
    stopped: str | None = None
    tokens: int = 0
    skipped: list[str] = field(default_factory=list)
    """Trajectories the distiller failed on (logged with the error); counted as processed."""
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(draft id, reason) of the drafts screening refused (see `screen`): never stored."""

    def summary(self) -> str:
        text = (
            f"{self.distiller}: {self.trajectories} trajectories distilled into {self.drafts} draft(s): "
            f"{len(self.added)} new skill(s), {len(self.merged)} merged into existing ones"
        )
        if self.tokens:
            text += f"; {self.tokens:,} model tokens"
        if self.refused:
            text += f"; refused {len(self.refused)} unsafe draft(s) ({'; '.join(r for _, r in self.refused[:2])})"
        if self.skipped:
            text += f"; skipped {len(self.skipped)} it could not read ({', '.join(self.skipped[:3])})"
        if self.stopped:
            text += f"; stopped early: {self.stopped}"
        return text


def distill_pending(
    store: TrajectoryStore,
    bank: SkillBank,
    distiller: BatchDistiller,
    *,
    batch: int = 50,
    limit: int | None = None,
    merge_config: MergeConfig | None = None,
    merger: Merger | None = None,
    progress: Callable[[int], None] | None = None,
    wait: bool = True,
    review: bool = False,
) -> PassReport:
    """Distill the trajectories `distiller` has not processed yet (at most `limit`); see the module doc.

    `progress(n)` is called after each batch with the number of trajectories it finished. With `wait=False` a
    pass already running elsewhere makes this one raise `outcomes.Busy` instead of waiting for it. With `review`
    the new skills are stored as candidates.
    """
    report = PassReport(distiller.name)
    with file_lock(bank.catalog.path.with_name(f".distill-{distiller.name}.lock"), wait=wait):
        while limit is None or report.trajectories < limit:
            want = batch if limit is None else min(batch, limit - report.trajectories)
            pending = store.pending_for(distiller.name, limit=want)
            if not pending:
                break
            result = _distill_isolated(distiller, pending, report)
            if result is None:
                break
            screened = screen(result.drafts, getattr(bank, "redactor", None))
            report.refused += screened.refused
            accepted = screened.accepted
            if review:
                accepted = [d.model_copy(update={"status": "candidate"}) for d in accepted]
            merged = merge_into_bank(bank, accepted, config=merge_config, merger=merger)
            if result.done:
                store.mark_processed(result.done, distiller.name)
            report.trajectories += len(result.done)
            report.drafts += len(result.drafts)
            report.added += merged.added
            report.merged += merged.merged
            report.tokens += result.tokens
            if progress is not None:
                progress(len(result.done))
            if result.stopped or not result.done:
                report.stopped = result.stopped or "the distiller finished none of the pending trajectories"
                break
    return report


def _distill_isolated(distiller: BatchDistiller, pending: list[Trajectory], report: PassReport) -> DistillResult | None:
    """`distill_batch`, but one trajectory that breaks the distiller must not stop every later pass.

    On an error the batch is retried one trajectory at a time. A deterministic distiller (the heuristic one)
    would fail on that trajectory forever, so it is counted as done and named in `report.skipped`; for any other
    distiller (a model can fail for a while) the pass stops and the trajectory stays pending.
    """
    try:
        return distiller.distill_batch(pending)
    except Exception:
        log.exception(
            "%s distiller failed on a batch of %d trajectories; retrying one by one", distiller.name, len(pending)
        )
    combined = DistillResult(drafts=[], done=[])
    for trajectory in pending:
        try:
            one = distiller.distill_batch([trajectory])
        except Exception as exc:
            if not getattr(distiller, "deterministic", False):
                report.stopped = f"{distiller.name} failed on {trajectory.trajectory_id}: {exc}"
                return combined if combined.done else None
            log.exception(
                "skipping trajectory %s: the %s distiller fails on it", trajectory.trajectory_id, distiller.name
            )
            report.skipped.append(trajectory.trajectory_id)
            combined.done.append(trajectory.trajectory_id)
            continue
        combined.drafts += one.drafts
        combined.done += one.done
        combined.tokens += one.tokens
        if one.stopped:
            combined.stopped = one.stopped
            break
    return combined
