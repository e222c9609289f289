"""What `record_trajectory` accepts, stores and answers: the per-call limit, the result, the used_skills step.

Shared by the tool adapter (its argument limits and refusal advice) and `SessionCapture.record` (the writer).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from skills_store.errors import InvalidInput
from skills_store.models import MAX_STEP_NESTING, Step, TrajectoryStatus, nesting_depth
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
    not_shown_skills: list[str] = Field(
        default_factory=list,
        exclude_if=lambda names: not names,  # absent when empty: the contract's four fields are the usual answer
        description="skills named in used_skills that this trajectory has not been shown (by search_skills or "
        "run_tests' suggestions): an outcome credits only skills the session was shown",
    )


def check_batch(steps: Sequence[Step]) -> None:
    """Refuse (`InvalidInput`, naming it) a batch of agent steps the store cannot take: too many for one call, or a
    step whose `args` or `result` nests deeper than `MAX_STEP_NESTING` (it could not be redacted or stored)."""
    if len(steps) > MAX_STEPS_PER_CALL:
        raise InvalidInput(f"{len(steps)} steps in one call: {BATCH_ADVICE}")
    for number, step in enumerate(steps):
        for field in ("args", "result"):
            if nesting_depth(getattr(step, field), MAX_STEP_NESTING) > MAX_STEP_NESTING:
                raise InvalidInput(
                    f"steps[{number}].{field} is nested more than {MAX_STEP_NESTING} levels deep (lists and "
                    "objects inside one another): record what matters of it, or send it as text (a JSON string)"
                )


def used_skills_step(redactor: Redactor, skill_ids: list[str], not_shown: Sequence[str] = ()) -> Step:
    """The step that stores which skills the agent says it applied (redacted like every step); `not_shown` are
    those the trajectory was not shown, noted in the step's text because its outcome will not credit them."""
    clean = [redactor.redact_text(s) for s in skill_ids]
    content = f"the agent used skills: {', '.join(clean)}"
    if not_shown:
        unseen = ", ".join(redactor.redact_text(s) for s in not_shown)
        content += f"; not shown in this session, so an outcome does not credit: {unseen}"
    return Step(
        kind="tool_call",
        tool="record_trajectory",
        args={"used_skills": clean},
        result=RecordSummary(used_skills=clean).model_dump(mode="json"),
        ok=True,
        content=content,
    )


def closing_fingerprint(steps: Sequence[Step], task: str | None, outcome: str | None, used: Sequence[str]) -> str:
    """What a closing `record_trajectory` call (`final=true`, no id) carries, timestamps left out: a client that
    retries it after a lost answer sends the same, and is answered with the trajectory it closed."""
    body = [[s.model_dump(mode="json", exclude={"ts"}) for s in steps], task, outcome, list(used)]
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
