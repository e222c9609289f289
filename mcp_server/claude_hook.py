"""`skillbank hook claude`: the adapter between Claude Code's hook command and the core.

Claude Code runs the hook command once per event with the event's JSON on stdin. What each event stores (the
trajectory `claude-<session_id>`, its steps, reward and closing) is `skills_store.trajectories.claude_events`; this
module reads stdin, calls it, and after SessionStart and UserPromptSubmit prints skills for the project or the
prompt as `additionalContext` (each skill once per session). Errors end with exit status 1 and a message on stderr.

Claude Code's text is taken as it comes: stdin that is not valid UTF-8 is decoded with U+FFFD for the bad bytes,
and a lone UTF-16 surrogate (Node's JSON writes `\\ud83d` for a string cut mid-emoji, a truncated Bash output say)
becomes U+FFFD too, so the step is stored rather than lost.

Speed: this module imports no MCP SDK, torch, Chroma or model; skills come from the catalog's keyword index
(`skills_store.search.keyword.quick_search`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from skills_store.errors import SkillStoreError
from skills_store.models import Skill
from skills_store.redact import Redactor
from skills_store.trajectories.claude_events import parse_event, record_event
from skills_store.trajectories.store import SQLiteTrajectoryStore
from skills_store.truncate import truncate_text

SKILLS_K = 3

Search = Callable[[str, int], list[Skill]]
LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


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
    """Store what the event says (the core); return the JSON to print (additionalContext), if any."""
    tid = record_event(event, store, redactor)
    if tid is None:
        return None
    name = event["hook_event_name"]
    query = project_query(event.get("cwd")) if name == "SessionStart" else str(event.get("prompt") or "")
    return _context(store, tid, name, query, search)


def default_search(home: Path, threshold: float | None = None) -> Search:
    """Keyword-only search carrying only skills whose relevance reaches `threshold` (default: the calibrated one)."""

    def search(query: str, k: int) -> list[Skill]:
        from skills_store.search.keyword import quick_search
        from skills_store.search.relevance import default_threshold

        return quick_search(home, query, k, threshold=default_threshold() if threshold is None else threshold)

    return search


def decode_stdin(data: bytes | str) -> str:
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data


def without_surrogates(value: Any) -> Any:
    """`value` (parsed JSON) with every unpaired surrogate, in keys and strings, replaced by U+FFFD: such text cannot
    be encoded as UTF-8, so neither stored nor searched. (A pair that JSON escaped is joined by `json.loads`.)"""
    if isinstance(value, str):
        return LONE_SURROGATE_RE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    return value


def run(
    stdin: bytes | str,
    *,
    home: Path,
    redact_patterns: list[str],
    out: TextIO,
    err: TextIO,
    search: Search | None = None,
    threshold: float | None = None,
) -> int:
    """The whole hook: 0 on success (JSON printed when there is context to add), 1 with a message on stderr."""
    try:
        event = without_surrogates(parse_event(decode_stdin(stdin)))
        redactor = Redactor(redact_patterns)
        with SQLiteTrajectoryStore(home / "trajectories.db") as store:
            output = handle_event(
                event, store, redactor, search if search is not None else default_search(home, threshold)
            )
    except SkillStoreError as exc:
        err.write(f"skillbank hook claude: {exc}\n")
        return 1
    except ValidationError as exc:  # a field the step model refuses: said in one line, like any other bad input
        err.write(f"skillbank hook claude: the event does not make a valid step: {exc.errors()[0]['msg']}\n")
        return 1
    if output is not None:
        out.write(json.dumps(output) + "\n")
    return 0
