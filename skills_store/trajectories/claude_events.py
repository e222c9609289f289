"""Claude Code hook events -> trajectory steps: the core of `skillbank hook claude`, with no I/O of its own.

Each Claude session is the trajectory `claude-<session_id>` (source `claude-code`); a session resumed after it was
closed continues in `claude-<session_id>.2`, `.3`, ...

| event              | stored                                                           |
| ------------------ | ---------------------------------------------------------------- |
| SessionStart       | the trajectory (workspace = cwd, repo = `repo_identity(cwd)`)    |
| UserPromptSubmit   | a `message` step; the first prompt becomes the task              |
| PostToolUse        | a `tool_call` step: tool, input, a summary of the response, ok   |
| PostToolUseFailure | a `tool_call` step with ok=false and the error                   |
| SessionEnd         | a last `observation`; the trajectory closes, outcome inferred    |

A Bash call that runs tests (pytest, npm test, go test, cargo test, ...: a runner where the shell runs it, see
`skills_store.trajectories.shell_tests`; `pip install pytest` or `cat pytest.ini` is no test run) sets the
trajectory's reward to 1.0 when it passed and 0.0 when it failed, so the outcome at SessionEnd follows the last test
run. Calls to skillbank's own MCP
tools (`mcp__skillbank__*`) are skipped: the server captures them itself. Other events are ignored. Everything is
redacted before it is stored. The hook adapter (`mcp_server.claude_hook`) reads stdin, calls `record_event`, and
adds skills to Claude's context.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from skills_store.errors import InvalidInput, NotFound
from skills_store.models import Step
from skills_store.protocols import TrajectoryStore
from skills_store.redact import Redactor
from skills_store.repo_identity import repo_identity
from skills_store.trajectories.closing import close_with_inferred_outcome
from skills_store.trajectories.shell_tests import runs_tests
from skills_store.truncate import truncate_text, truncate_value

SOURCE = "claude-code"
OWN_TOOLS = "mcp__skillbank__"
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: Response fields that repeat whole files; they are dropped from the stored summary.
BULKY_FIELDS = frozenset({"originalFile", "file", "structuredPatch"})
ARG_CHARS = 4_000
RESULT_CHARS = 2_000
#: Events after which the adapter may add skills to Claude's context.
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})


class HookEventError(InvalidInput):
    """The input was not a Claude Code hook event; the message says what was wrong."""


def parse_event(text: str) -> dict[str, Any]:
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookEventError(f"stdin is not JSON ({exc}); run this as a Claude Code hook command") from None
    if not isinstance(event, dict) or not isinstance(event.get("hook_event_name"), str):
        raise HookEventError("stdin has no hook_event_name; run this as a Claude Code hook command")
    session_id = event.get("session_id")
    if not isinstance(session_id, str) or not SESSION_ID_RE.match(session_id):
        raise HookEventError(f"session_id {session_id!r} is missing or not an id (letters, digits, '.', '_', '-')")
    return event


def session_trajectory(store: TrajectoryStore, event: dict[str, Any]) -> str:
    """The open trajectory of this Claude session, created on first use."""
    tid = find_trajectory(store, event, create=True)
    assert tid is not None  # created when missing
    return tid


def find_trajectory(store: TrajectoryStore, event: dict[str, Any], *, create: bool) -> str | None:
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    base = f"claude-{event['session_id']}"
    for n in range(1, 1000):
        tid = base if n == 1 else f"{base}.{n}"
        if create:
            traj = store.ensure(tid, source=SOURCE, workspace=cwd, repo=repo_identity(cwd) if cwd else None)
        else:
            try:
                traj = store.get(tid, with_steps=False)
            except NotFound:
                return None
        if traj.status == "open":
            return tid
    raise HookEventError(f"session {event['session_id']} was resumed too many times")


def _summary(response: Any, redactor: Redactor) -> Any:
    if isinstance(response, dict):
        response = {k: v for k, v in response.items() if k not in BULKY_FIELDS}
    return truncate_value(redactor.redact(response), RESULT_CHARS)


def tool_step(event: dict[str, Any], redactor: Redactor) -> Step | None:
    """The step of a PostToolUse / PostToolUseFailure event (None for skillbank's own tools)."""
    tool = str(event.get("tool_name") or "unknown")
    if tool.startswith(OWN_TOOLS):
        return None
    ok = event["hook_event_name"] == "PostToolUse"
    raw_input = event.get("tool_input")
    tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
    duration = event.get("duration_ms")
    return Step(
        kind="tool_call",
        tool=tool,
        args=truncate_value(redactor.redact(tool_input), ARG_CHARS),
        result=_summary(event.get("tool_response"), redactor) if ok else {"is_interrupt": event.get("is_interrupt")},
        ok=ok,
        content="" if ok else truncate_text(redactor.redact_text(str(event.get("error") or "")), RESULT_CHARS),
        duration_s=_seconds(duration),
    )


def _seconds(duration_ms: Any) -> float | None:
    """A tool call's `duration_ms` in seconds; None for anything but a finite number >= 0 (a bool, a string)."""
    if isinstance(duration_ms, bool) or not isinstance(duration_ms, int | float):
        return None
    return duration_ms / 1000 if math.isfinite(duration_ms) and duration_ms >= 0 else None


def bash_test_reward(event: dict[str, Any]) -> float | None:
    """1.0 / 0.0 when the event is a Bash call that ran tests and passed / failed, else None."""
    raw_input = event.get("tool_input")
    command = raw_input.get("command") if isinstance(raw_input, dict) else None
    if event.get("tool_name") != "Bash" or not isinstance(command, str) or not runs_tests(command):
        return None
    return 1.0 if event["hook_event_name"] == "PostToolUse" else 0.0


def record_event(event: dict[str, Any], store: TrajectoryStore, redactor: Redactor) -> str | None:
    """Store what the event says (see the module doc). Returns the trajectory id after a CONTEXT_EVENTS event."""
    name = event["hook_event_name"]
    if name == "SessionStart":
        return session_trajectory(store, event)
    if name == "UserPromptSubmit":
        prompt = redactor.redact_text(str(event.get("prompt") or ""))
        message = Step(kind="message", content=truncate_text(prompt, 20_000))
        store.check_steps([message])  # a step the store refuses creates no trajectory either
        tid = session_trajectory(store, event)
        store.append(tid, [message])
        if prompt and store.get(tid, with_steps=False).task is None:
            store.update(tid, task=truncate_text(prompt, 2_000))
        return tid
    if name in ("PostToolUse", "PostToolUseFailure"):
        step = tool_step(event, redactor)
        if step is None:
            return None
        store.check_steps([step])
        tid = session_trajectory(store, event)
        store.append(tid, [step])
        reward = bash_test_reward(event)
        if reward is not None:
            store.update(tid, reward=reward)
        return None
    if name == "SessionEnd":
        ended = find_trajectory(store, event, create=False)
        if ended is not None:  # None: nothing was captured (`claude mcp list` and other short-lived sessions)
            reason = event.get("reason") or "unknown reason"
            close_with_inferred_outcome(store, ended, f"Claude Code session ended ({reason})")
    return None
