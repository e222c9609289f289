"""Trajectories as training data: raw JSONL, and TRL conversational records with a reward.

`jsonl`: one trajectory per line, `Trajectory.model_dump(mode="json")` with its steps.

`trl`: one record per trajectory in TRL's conversational prompt-completion form, which `SFTTrainer` trains on
(loss on the completion only) and whose `prompt` `GRPOTrainer` samples from; the extra `reward` column is what
reward-weighted fine-tuning (or filtering to `reward >= x`) uses:

    {"prompt": [{"role": "user", "content": "<task>"}],
     "completion": [{"role": "assistant", "content": "...", "tool_calls": [...]},
                    {"role": "tool", "tool_call_id": "call_3", "name": "run_tests", "content": "..."}, ...],
     "reward": 0.85, "outcome": "success", "trajectory_id": "traj-...", "source": "mcp:claude-code"}

Steps map to messages as: `thought` and `action` -> assistant text; `tool_call` -> an assistant message with one
OpenAI-style tool call (arguments as an object) followed by the tool's message (the result summary, or the
error); `observation` -> a tool message when it answers the step before, else a user message; `message` ->
user. The reward is the last `run_tests` reward of the trajectory (a pass of selected tests after a failure
they left out stands for the last run before it that counted: `evidence.solved_reward`), else 1.0 for `success`
and 0.0 for `failure`, else null.

The server's closing note ("session ended ...; outcome ...") is not the agent's: it is left out of TRL records, so
it never becomes the prompt of a trajectory without a task. A trajectory with nothing to train on (no task and no
user message to prompt with, or no completion) is skipped and counted in `ExportStats.skipped`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from skills_store.errors import InvalidInput
from skills_store.models import StoredStep, Trajectory
from skills_store.trajectories.closing import is_closing_note
from skills_store.trajectories.evidence import solved_reward

ExportFormat = Literal["jsonl", "trl"]
FORMATS: tuple[ExportFormat, ...] = ("jsonl", "trl")


@dataclass
class ExportStats:
    written: int = 0
    skipped: list[str] = field(default_factory=list)
    """Ids of the trajectories left out of a TRL export: nothing to prompt with, or nothing to complete."""


def reward_of(traj: Trajectory) -> float | None:
    """The record's reward: the last run's, except that a pass of selected tests that leaves an earlier failure
    unproven does not stand for "solved" (`evidence.solved_reward`); else from the outcome. Needs the steps."""
    if traj.reward is not None:
        return solved_reward(traj)
    return {"success": 1.0, "failure": 0.0}.get(traj.outcome or "")


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _messages(steps: list[StoredStep]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for step in steps:
        if is_closing_note(step):
            continue
        if step.kind in ("thought", "action"):
            out.append({"role": "assistant", "content": step.content})
        elif step.kind == "tool_call":
            call_id = f"call_{step.index}"
            name = step.tool or "tool"
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": call_id, "type": "function", "function": {"name": name, "arguments": step.args or {}}}
                    ],
                }
            )
            body = step.content if step.ok is False and step.content else _text(step.result) or step.content
            out.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": body})
        elif step.kind == "observation" and out and out[-1]["role"] == "assistant":
            out.append({"role": "tool", "name": step.tool or "observation", "content": step.content})
        else:
            out.append({"role": "user", "content": step.content})
    return out


def to_trl(traj: Trajectory) -> dict[str, Any] | None:
    """One TRL conversational prompt-completion record (see the module doc); None when there is nothing to train on."""
    messages = _messages(traj.steps)
    if traj.task:
        prompt = [{"role": "user", "content": traj.task}]
    else:
        # No task: the first user message (the prompt that started a Claude Code session) is the prompt.
        first = next((i for i, m in enumerate(messages) if m["role"] == "user" and m["content"].strip()), None)
        if first is None:
            return None
        prompt = [messages.pop(first)]
    if not messages:
        return None
    return {
        "prompt": prompt,
        "completion": messages,
        "reward": reward_of(traj),
        "outcome": traj.outcome,
        "trajectory_id": traj.trajectory_id,
        "source": traj.source,
        "repo": traj.repo,
        "skills_shown": traj.skills_shown,
    }


def export_lines(
    trajectories: Iterable[Trajectory], fmt: ExportFormat, stats: ExportStats | None = None
) -> Iterator[str]:
    """JSON lines (without newlines) of the trajectories in `fmt`; `stats` counts what was written and skipped."""
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    stats = stats if stats is not None else ExportStats()
    for traj in trajectories:
        record = traj.model_dump(mode="json") if fmt == "jsonl" else to_trl(traj)
        if record is None:
            stats.skipped.append(traj.trajectory_id)
            continue
        stats.written += 1
        yield json.dumps(record, ensure_ascii=False)
