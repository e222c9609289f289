"""`scripted:KIND` models: deterministic stand-ins that run the whole eval offline, for tests and demos.

They answer from the task folder of the task the prompt's header names (`Task ID:` opens the one-shot prompt and
the agentic task), never of another task the skills block mentions (a skill's sources and examples name the tasks
it was learned on); a prompt without that header is searched for any known task id, longest first. A run with
them checks the harness (copies, patches, grading, trajectories, distillation, statistics, report), never a model.
Kinds:

    scripted:gold    always the gold patch
    scripted:wrong   never a usable patch
    scripted:mixed   the gold patch for a seeded half of (task, sample) pairs, else nothing
    scripted:skills  the gold patch when a skill id is in the prompt, else behaves like `mixed`

In one-shot mode they answer with text; when the agent offers an `apply_patch` tool they call it once with the
patch and then finish. Results with them are labelled a harness check in the report.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent.eval.split import EvalError
from agent.tasks.model import TaskFolder

KINDS = ("gold", "wrong", "mixed", "skills")
SKILL_ID_RE = re.compile(r"\bsk-[0-9a-f]{6,}\b")
HEADER_RE = re.compile(r"(?:Task: )?Task ([A-Za-z0-9][A-Za-z0-9._-]*):\n")
"""The task header: `Task ID:` opens the one-shot prompt; the agent's prompt opens `Task: ` + the eval's task text."""


class ScriptedModelError(EvalError):
    """An unknown `scripted:` kind."""


def is_scripted(spec: str) -> bool:
    return spec.startswith("scripted:")


def _prompt_text(messages: list[ModelMessage]) -> str:
    parts: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    parts.append(part.content if isinstance(part.content, str) else str(part.content))
                elif isinstance(part, ToolReturnPart):
                    parts.append(str(part.content))
    return "\n".join(parts)


def _task_id(messages: list[ModelMessage], text: str, ids: list[str]) -> str | None:
    """The task the prompt is about: the id in the header of its first user prompt, else any known id in it."""
    first = next(
        (p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)),
        None,
    )
    header = HEADER_RE.match(first) if isinstance(first, str) else None
    if header is not None and header.group(1) in ids:
        return header.group(1)
    return next((t for t in ids if t in text), None)


def _chance(*keys: object) -> bool:
    digest = hashlib.sha256("\0".join(map(str, keys)).encode()).digest()
    return digest[0] % 2 == 0


def scripted_model(spec: str, tasks: Mapping[str, TaskFolder]) -> FunctionModel:
    kind = spec.partition(":")[2]
    if kind not in KINDS:
        raise ScriptedModelError(f"unknown scripted model {spec!r}; use one of scripted:{', scripted:'.join(KINDS)}")
    ids = sorted(tasks, key=len, reverse=True)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        text = _prompt_text(messages)
        task_id = _task_id(messages, text, ids)
        settings: Mapping[str, Any] = info.model_settings or {}
        sample = settings.get("seed", 0)
        gold = tasks[task_id].gold_patch if task_id else None
        good = gold is not None and (
            kind == "gold"
            or (kind == "mixed" and _chance(task_id, sample))
            or (kind == "skills" and (bool(SKILL_ID_RE.search(text)) or _chance(task_id, sample)))
        )
        tools = {tool.name for tool in info.function_tools}
        if "apply_patch" in tools:
            called = any(
                isinstance(p, ToolCallPart) and p.tool_name == "apply_patch"
                for m in messages
                if isinstance(m, ModelResponse)
                for p in m.parts
            )
            if good and not called:
                return ModelResponse(parts=[ToolCallPart("apply_patch", {"patch": gold})])
            return ModelResponse(parts=[TextPart("Done." if good else "I could not find the bug.")])
        if good:
            return ModelResponse(parts=[TextPart(f"Here is the fix.\n\n```diff\n{gold}```\n")])
        return ModelResponse(parts=[TextPart("I could not find the bug.")])

    return FunctionModel(answer, model_name=spec)
