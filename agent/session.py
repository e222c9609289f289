"""One agent session's bookkeeping: every skillbank call goes through here, so the harness knows the last test
run, whether a patch landed after it, which skills were shown, and can stream a line per call.

Tool calls are captured by the server on their own; the session adds the steps only the agent knows (its thoughts
with token counts, its read-only workspace calls, the final answer) through `record_trajectory`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.mcp import CallToolFunc, MCPToolset

from agent.prompt import compact_run
from skills_store.models import MAX_STEP_CONTENT_CHARS, MAX_TASK_CHARS
from skills_store.truncate import truncate_text

Progress = Callable[[str], None]


class ServerLost(Exception):
    """The skillbank server stopped answering the harness (it crashed, was killed, closed its pipe): the run ends
    as a `failure` naming it, and nothing more can be recorded."""


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(tool: str, result: Any) -> str:
    """A one-line summary of a tool result, for the progress stream."""
    if not isinstance(result, dict):
        return _short(result)
    if tool == "run_tests":
        reward = float((result.get("reward") or {}).get("value", 0.0))
        return (f"{result.get('status')} ({result.get('passed', 0)} passed, {result.get('failed', 0)} failed, "
                f"{result.get('errors', 0)} errors; reward {reward:.2f})")  # fmt: skip
    if tool == "apply_patch":
        files = ", ".join(f"{f.get('action')} {f.get('path')}" for f in result.get("files") or [])
        syntax = f"; {len(result['syntax_errors'])} syntax error(s)" if result.get("syntax_errors") else ""
        return f"{'applied' if result.get('applied') else 'not applied'}: {files}{syntax}"
    if tool == "search_skills":
        return f"{len(result.get('skills') or [])} skill(s): " + ", ".join(
            s.get("skill_id", "?") for s in result.get("skills") or []
        )
    return _short(result)


class Session:
    """State shared by the harness and the model's tool calls within one solve."""

    def __init__(self, toolset: MCPToolset[Any], progress: Progress | None, test_args: dict[str, Any]) -> None:
        self.toolset = toolset
        self.progress = progress
        self.test_args = test_args
        self.last_run: dict[str, Any] | None = None
        self.patched_since_run = False
        self.skills_shown: list[str] = []
        """Every skill a call of this session returned (the harness's own search included)."""
        self.shown_to_model: list[str] = []
        """The skills the model saw: in its prompt, its search_skills results, its run_tests suggestions. Only
        these can be credited as used."""
        self.tool_calls = 0
        self.trajectory_id: str | None = None

    def say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)

    def observe(self, tool: str, args: dict[str, Any], result: Any, *, by_model: bool = False) -> None:
        """Book a skillbank call's result; `by_model`: the model made the call and sees its result."""
        self.tool_calls += 1
        if isinstance(result, dict):
            if tool == "run_tests":
                if self.verifies(args):
                    self.last_run = result
                    self.patched_since_run = False
                self.shown(result.get("suggested_skills") or [], to_model=by_model)
            elif tool == "apply_patch" and result.get("applied"):
                self.patched_since_run = True
            elif tool == "search_skills":
                self.shown(result.get("skills") or [], to_model=by_model)
        self.say(f"{tool} {_short(args, 60)} -> {describe(tool, result)}")

    def verifies(self, args: dict[str, Any]) -> bool:
        """Whether a run_tests call runs what the harness's own run does (the suite, or the tests it was given), so
        its result can stand for the attempt's: a model's run of another `command` (`true`) or of a few tests
        does not (the harness runs its own at the end instead)."""
        return args.get("command") is None and (args.get("tests") or None) == (self.test_args.get("tests") or None)

    def shown(self, skills: list[dict[str, Any]], *, to_model: bool) -> None:
        """Note skills a call returned; `to_model`: they reached the model (a result it read, or its prompt)."""
        for s in skills:
            skill_id = s.get("skill_id")
            if not skill_id:
                continue
            if skill_id not in self.skills_shown:
                self.skills_shown.append(skill_id)
            if to_model and skill_id not in self.shown_to_model:
                self.shown_to_model.append(skill_id)

    async def process_tool_call(self, _ctx: RunContext[Any], call_tool: CallToolFunc, name: str, args: dict[str, Any]):
        """The model's calls of skillbank tools: observed, and run_tests results compacted for the model."""
        try:
            result = await call_tool(name, args)
        except ToolFailed as exc:
            self.tool_calls += 1
            self.say(f"{name} {_short(args, 60)} -> refused: {_short(exc.message)}")
            raise
        self.observe(name, args, result, by_model=True)
        return compact_run(result) if name == "run_tests" and isinstance(result, dict) else result

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        """A call made by the harness itself (captured by the server like the model's)."""
        result = await self._direct(name, args)
        self.observe(name, args, result)
        return result

    async def _direct(self, name: str, args: dict[str, Any]) -> Any:
        """A harness call; a refusal of the tool is a `ToolFailed`, so a retry asked for here is the connection or
        the protocol failing (`Connection closed` once the server is gone): `ServerLost`."""
        try:
            return await self.toolset.direct_call_tool(name, args)
        except ModelRetry as exc:
            raise ServerLost(f"the skillbank server stopped answering ({name}: {exc.message})") from exc

    async def try_call(self, name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """A harness call whose refusal is reported and survived (the run goes on without its result)."""
        try:
            result = await self.call(name, args)
        except ToolFailed as exc:
            self.tool_calls += 1
            self.say(f"{name} refused: {_short(exc.message, 300)}")
            return None
        return result if isinstance(result, dict) else None

    async def run_tests(self) -> dict[str, Any] | None:
        return await self.try_call("run_tests", dict(self.test_args))

    async def record(self, steps: list[dict[str, Any]], **fields: Any) -> None:
        """Append steps (and task / outcome / final) to this session's trajectory."""
        now = datetime.now(UTC).isoformat()
        for step in steps:  # what the server would refuse is cut (a 30 KB pasted task, a runaway model's reply)
            step.setdefault("ts", now)
            if isinstance(step.get("content"), str):
                step["content"] = truncate_text(step["content"], MAX_STEP_CONTENT_CHARS)
        if isinstance(fields.get("task"), str):
            fields["task"] = truncate_text(fields["task"], MAX_TASK_CHARS)
        args = {"steps": steps, **{k: v for k, v in fields.items() if v is not None}}
        result = await self._direct("record_trajectory", args)
        if isinstance(result, dict):
            self.trajectory_id = result.get("trajectory_id", self.trajectory_id)

    async def workspace_call(self, tool: str, args: dict[str, Any], summary: str) -> None:
        self.tool_calls += 1
        first = summary.splitlines()[0] if summary else ""
        self.say(f"{tool} {_short(args, 60)} -> {_short(first)}")
        await self.record([{"kind": "tool_call", "tool": tool, "args": args, "content": summary[:2000], "ok": True}])
