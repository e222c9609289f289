"""What `record_trajectory` accepts, stores and answers: the per-call limit, the result, the used_skills step.

Shared by the tool adapter (its argument limits and refusal advice) and `SessionCapture.record` (the writer).
"""

from __future__ import annotations

from pydantic import BaseModel

from skills_store.models import Step, TrajectoryStatus
from skills_store.redact import Redactor
from skills_store.trajectories.summaries import RecordSummary

#: `record_trajectory` accepts at most this many steps per call.
MAX_STEPS_PER_CALL = 1_000
BATCH_ADVICE = (
    f"send at most {MAX_STEPS_PER_CALL} steps per call: split them into batches and send each batch with the "
    "trajectory_id the first call returned; set final=true on the last batch only"
)


class RecordResult(BaseModel):
    """The result of `record_trajectory`."""

    trajectory_id: str
    steps_recorded: int
    total_steps: int
    status: TrajectoryStatus


def used_skills_step(redactor: Redactor, skill_ids: list[str]) -> Step:
    """The step that stores which skills the agent says it applied (redacted like every step)."""
    clean = [redactor.redact_text(s) for s in skill_ids]
    return Step(
        kind="tool_call",
        tool="record_trajectory",
        args={"used_skills": clean},
        result=RecordSummary(used_skills=clean).model_dump(mode="json"),
        ok=True,
        content=f"the agent used skills: {', '.join(clean)}",
    )
