"""Closing a trajectory that ended without `final=true`: its outcome inferred, and a note that says so.

A session can end without the agent saying how it went (the client disconnected, the server was idle too long,
a Claude Code session ended). The outcome is then inferred the same way wherever it ends: the agent's own
outcome if it set one, else from the last test run's reward, else `abandoned`. A last run of selected tests that
passed while a test that failed earlier was not among them proves nothing (`evidence`): that is a `failure`,
since the last that is known of that test is that it failed. The note appended before
closing is the server's, not the agent's: it carries `tool="skillbank"` so that exports can tell it apart
(`is_closing_note` also knows the untagged notes stored before the tag).
"""

from __future__ import annotations

import re

from skills_store.errors import InvalidInput
from skills_store.models import Outcome, Step, Trajectory
from skills_store.protocols import TrajectoryStore
from skills_store.trajectories.evidence import SOLVED, evidence

#: The `tool` of the server's closing note.
NOTE_TOOL = "skillbank"
_LEGACY_NOTE = re.compile(r"^(?:Claude Code )?session ended \(.*; outcome (?:success|failure|abandoned): ", re.DOTALL)


def infer_outcome(traj: Trajectory) -> tuple[Outcome, str]:
    """The outcome of a trajectory that ends without one, and why: the agent's, else from the last test run.

    Reads the steps (the runs' scope) when the last run passed: pass a trajectory read with its steps.
    """
    if traj.outcome is not None:
        return traj.outcome, "set by the agent"
    if traj.reward is not None:
        if traj.reward >= SOLVED:
            found = evidence(traj)
            if found.last_pass_unproven:
                return "failure", f"inferred from the test runs: {found.why()}"
        outcome: Outcome = "success" if traj.reward >= SOLVED else "failure"
        return outcome, f"inferred from the last test run (reward {traj.reward:.2f})"
    return "abandoned", "no outcome was set and no tests were run"


def is_closing_note(step: Step) -> bool:
    """Whether `step` is the server's closing note (tagged, or in the form stored before the tag)."""
    if step.kind != "observation":
        return False
    return step.tool == NOTE_TOOL or (step.tool is None and bool(_LEGACY_NOTE.match(step.content)))


def close_with_inferred_outcome(store: TrajectoryStore, trajectory_id: str, ended: str) -> Trajectory | None:
    """Close the trajectory if it is still open, with its inferred outcome; None when it was not open.

    `ended` says how the session ended ("session ended (the client disconnected) without final=true"); the note
    reads `<ended>; outcome <outcome>: <why>`. A trajectory closed or removed meanwhile by another writer is
    left alone (None).
    """
    try:
        traj = store.get(trajectory_id, with_steps=False)
        if traj.status != "open":
            return None
        if traj.outcome is None and traj.reward is not None and traj.reward >= SOLVED:
            traj = store.get(trajectory_id)  # the runs' scope decides whether that pass proves anything
        outcome, why = infer_outcome(traj)
        note = Step(kind="observation", tool=NOTE_TOOL, content=f"{ended}; outcome {outcome}: {why}")
        store.append(trajectory_id, [note])
        return store.close_trajectory(trajectory_id, outcome)
    except InvalidInput:
        return None
