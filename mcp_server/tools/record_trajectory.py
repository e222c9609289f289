"""The `record_trajectory` tool: agents add their own steps, set the task and outcome, and close with `final`.

Tool calls are captured without it (see `mcp_server.capture`); this tool is for what only the agent knows:
its reasoning, the task in its words, and whether it worked.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from mcp_server.deps import Deps
from mcp_server.errors import tool_result
from mcp_server.recording import BATCH_ADVICE, MAX_STEPS_PER_CALL, RecordResult
from mcp_server.toolset import ToolSet
from skills_store.models import MAX_TASK_CHARS, Step

#: At most this many skills per call in `used_skills`.
MAX_USED_SKILLS = 50
SkillId = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:/-]*$")]

DESCRIPTION = (
    "Add steps to this session's trajectory (your thoughts, actions, observations, messages), set the task and "
    "the outcome, name the skills you applied (used_skills), and close it with final=true when the task is done. "
    "Tool calls to this server are recorded automatically; you do not need to repeat them. Secrets are redacted "
    "before anything is stored."
)


def render(result: RecordResult) -> str:
    state = "closed" if result.status == "closed" else "still open"
    return (
        f"Recorded {result.steps_recorded} step(s) to {result.trajectory_id}; {result.total_steps} in total, "
        f"trajectory {state}."
    )


def register(server: ToolSet, deps: Deps) -> None:
    @server.tool(
        name="record_trajectory",
        description=DESCRIPTION,
        # It only appends to this session's trajectory (and closes it); a repeated call appends again.
        annotations=ToolAnnotations(
            title="Record trajectory",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
        advice={
            ("steps", "too_long"): BATCH_ADVICE,
            ("used_skills", "string_pattern_mismatch"): "send skill_id values exactly as search_skills returned them",
            ("used_skills", "too_long"): f"name at most {MAX_USED_SKILLS} skills, the ones you really applied",
        },
    )
    async def record_trajectory(
        ctx: Context,
        steps: Annotated[
            list[Step],
            Field(
                max_length=MAX_STEPS_PER_CALL,
                description="Steps to append, oldest first. kind: thought|action|observation|tool_call|message.",
            ),
        ] = [],  # noqa: B006 - pydantic copies defaults
        task: Annotated[
            str | None, Field(max_length=MAX_TASK_CHARS, description="What the session is trying to do.")
        ] = None,
        outcome: Annotated[
            Literal["success", "failure", "abandoned"] | None, Field(description="How it ended, if it has.")
        ] = None,
        final: Annotated[bool, Field(description="Close the trajectory after recording.")] = False,
        trajectory_id: Annotated[
            str | None,
            Field(
                max_length=200,
                description="Write to this trajectory (an id a call returned) instead of this "
                "session's; over stateless HTTP, pass the id the first call returned to every later call.",
            ),
        ] = None,
        used_skills: Annotated[
            list[SkillId] | None,
            Field(
                max_length=MAX_USED_SKILLS,
                description="skill_id of each skill you applied (from search_skills "
                "or suggested_skills); only these skills' confidence moves with the outcome.",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, RecordResult]:
        result = await deps.capture.record(
            ctx, steps, task=task, outcome=outcome, final=final, trajectory_id=trajectory_id, used_skills=used_skills
        )
        return tool_result(result, render(result))
