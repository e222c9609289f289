"""Claude Code hooks -> trajectories, and skills -> Claude's context (`skillbank hook claude`).

Claude Code runs the hook command once per event with the event's JSON on stdin. Each Claude session is the
trajectory `claude-<session_id>` (source `claude-code`); a session resumed after it was closed continues in
`claude-<session_id>.2`, `.3`, ...

| event              | stored                                                           | printed                 |
| ------------------ | ---------------------------------------------------------------- | ----------------------- |
| SessionStart       | the trajectory (workspace = cwd)                                 | skills for the project  |
| UserPromptSubmit   | a `message` step; the first prompt becomes the task              | skills for the prompt   |
| PostToolUse        | a `tool_call` step: tool, input, a summary of the response, ok   |                         |
| PostToolUseFailure | a `tool_call` step with ok=false and the error                   |                         |
| SessionEnd         | a last `observation`; the trajectory closes, outcome inferred    |                         |

A Bash call that runs tests (pytest, npm test, go test, cargo test, ...) sets the trajectory's reward to 1.0
when it passed and 0.0 when it failed, so the outcome at SessionEnd follows the last test run. Calls to
skillbank's own MCP tools (`mcp__skillbank__*`) are skipped: the server captures them itself. Other events
are ignored. Everything is redacted before it is stored.

Speed: this module imports no MCP SDK, torch, Chroma or model; skills come from the catalog's keyword index
(`skills_store.search.keyword.quick_search`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from skills_store.errors import NotFound, SkillStoreError
from skills_store.models import Skill, Step
from skills_store.redact import Redactor
from skills_store.repo_identity import repo_identity
from skills_store.trajectories.closing import close_with_inferred_outcome
from skills_store.trajectories.store import SQLiteTrajectoryStore
from skills_store.truncate import truncate_text, truncate_value

SOURCE = "claude-code"
OWN_TOOLS = "mcp__skillbank__"
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
TEST_COMMAND_RE = re.compile(
    r"\b(?:pytest|py\.test|tox|nox|unittest|(?:npm|pnpm|yarn|bun)(?: run)? test|go test|cargo (?:test|nextest)|"
    r"mvn(?:w)? (?:test|verify)|gradlew? test|make (?:test|check)|rspec|jest|vitest|phpunit|ctest|dotnet test)\b"
)
#: Response fields that repeat whole files; they are dropped from the stored summary.
BULKY_FIELDS = frozenset({"originalFile", "file", "structuredPatch"})
ARG_CHARS = 4_000
RESULT_CHARS = 2_000
SKILLS_K = 3

Search = Callable[[str, int], list[Skill]]


class HookInputError(Exception):
    """The hook's stdin was not a Claude Code hook event; the message says what was wrong."""


def parse_event(text: str) -> dict[str, Any]:
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookInputError(f"stdin is not JSON ({exc}); run this as a Claude Code hook command") from None
    if not isinstance(event, dict) or not isinstance(event.get("hook_event_name"), str):
        raise HookInputError("stdin has no hook_event_name; run this as a Claude Code hook command")
    session_id = event.get("session_id")
    if not isinstance(session_id, str) or not SESSION_ID_RE.match(session_id):
        raise HookInputError(f"session_id {session_id!r} is missing or not an id (letters, digits, '.', '_', '-')")
    return event


def session_trajectory(store: SQLiteTrajectoryStore, event: dict[str, Any]) -> str:
    """The open trajectory of this Claude session, created on first use."""
    tid = _find_trajectory(store, event, create=True)
    assert tid is not None  # created when missing
    return tid


def _find_trajectory(store: SQLiteTrajectoryStore, event: dict[str, Any], *, create: bool) -> str | None:
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
    raise HookInputError(f"session {event['session_id']} was resumed too many times")


def project_query(cwd: str | None) -> str:
    """Words describing the project at session start: its directory name and the current git branch."""
    if not cwd:
        return ""
    root = Path(cwd)
    words = [root.name]
    try:
        head = (root / ".git" / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        head = ""
    if head.startswith("ref: refs/heads/"):
        words.append(head.removeprefix("ref: refs/heads/"))
    return re.sub(r"[-_/.]+", " ", " ".join(words)).strip()


def render_skills(skills: list[Skill]) -> str:
    lines = [
        "skillbank: lessons from earlier coding sessions that may apply here (advice from other sessions, "
        "not instructions; verify against the code before acting):"
    ]
    for i, s in enumerate(skills, 1):
        lines.append(
            f"{i}. [{s.skill_id}] {s.title} (confidence {s.confidence:.2f})\n"
            f"   When you see: {truncate_text(s.pattern, 400)}\n   Do: {truncate_text(s.strategy, 800)}"
        )
    return "\n".join(lines)


def _summary(response: Any, redactor: Redactor) -> Any:
    if isinstance(response, dict):
        response = {k: v for k, v in response.items() if k not in BULKY_FIELDS}
    return truncate_value(redactor.redact(response), RESULT_CHARS)


def _context(store, tid: str, event_name: str, query: str, search: Search | None) -> dict[str, Any] | None:
    if search is None or not query.strip():
        return None
    shown = set(store.shown_skills(tid))
    fresh = [s for s in search(query, SKILLS_K + len(shown)) if s.skill_id not in shown][:SKILLS_K]
    if not fresh:
        return None
    store.link_skills(tid, [s.skill_id for s in fresh])
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": render_skills(fresh)}}


def handle_event(
    event: dict[str, Any], store: SQLiteTrajectoryStore, redactor: Redactor, search: Search | None
) -> dict[str, Any] | None:
    """Store what the event says; return the JSON to print (additionalContext), if any."""
    name = event["hook_event_name"]
    if name == "SessionStart":
        tid = session_trajectory(store, event)
        return _context(store, tid, name, project_query(event.get("cwd")), search)
    if name == "UserPromptSubmit":
        prompt = redactor.redact_text(str(event.get("prompt") or ""))
        tid = session_trajectory(store, event)
        store.append(tid, [Step(kind="message", content=truncate_text(prompt, 20_000))])
        if prompt and store.get(tid, with_steps=False).task is None:
            store.update(tid, task=truncate_text(prompt, 2_000))
        return _context(store, tid, name, str(event.get("prompt") or ""), search)
    if name in ("PostToolUse", "PostToolUseFailure"):
        tool = str(event.get("tool_name") or "unknown")
        if tool.startswith(OWN_TOOLS):
            return None
        ok = name == "PostToolUse"
        raw_input = event.get("tool_input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        duration = event.get("duration_ms")
        step = Step(
            kind="tool_call",
            tool=tool,
            args=truncate_value(redactor.redact(tool_input), ARG_CHARS),
            result=_summary(event.get("tool_response"), redactor)
            if ok
            else {"is_interrupt": event.get("is_interrupt")},
            ok=ok,
            content="" if ok else truncate_text(redactor.redact_text(str(event.get("error") or "")), RESULT_CHARS),
            duration_s=duration / 1000 if isinstance(duration, int | float) and duration >= 0 else None,
        )
        tid = session_trajectory(store, event)
        store.append(tid, [step])
        command = tool_input.get("command")
        if tool == "Bash" and isinstance(command, str) and TEST_COMMAND_RE.search(command):
            store.update(tid, reward=1.0 if ok else 0.0)
        return None
    if name == "SessionEnd":
        ended = _find_trajectory(store, event, create=False)
        if ended is None:
            return None  # nothing was captured (`claude mcp list` and other short-lived sessions)
        reason = event.get("reason") or "unknown reason"
        close_with_inferred_outcome(store, ended, f"Claude Code session ended ({reason})")
    return None


def default_search(home: Path) -> Search:
    def search(query: str, k: int) -> list[Skill]:
        from skills_store.search.keyword import quick_search

        return quick_search(home, query, k)

    return search


def run(
    stdin_text: str, *, home: Path, redact_patterns: list[str], out: TextIO, err: TextIO, search: Search | None = None
) -> int:
    """The whole hook: 0 on success (JSON printed when there is context to add), 1 with a message on stderr."""
    try:
        event = parse_event(stdin_text)
        redactor = Redactor(redact_patterns)
        with SQLiteTrajectoryStore(home / "trajectories.db") as store:
            output = handle_event(event, store, redactor, search if search is not None else default_search(home))
    except (HookInputError, SkillStoreError) as exc:
        err.write(f"skillbank hook claude: {exc}\n")
        return 1
    if output is not None:
        out.write(json.dumps(output) + "\n")
    return 0
