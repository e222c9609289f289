"""What one attempt produced, and the append-only log of attempts that makes an eval resumable.

Every finished attempt is one JSON line in `attempts.jsonl`, written and flushed before the next begins; a rerun
with the same output dir skips every attempt already in the log. A line cut short by a crash is ignored (that
attempt simply runs again).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

Phase = Literal["train", "heldout"]
Condition = Literal["skills", "no_skills"]


class AttemptRecord(BaseModel):
    round: int
    phase: Phase
    condition: Condition
    task_id: str
    attempt: int
    resolved: bool
    valid: bool
    """False when grading timed out or showed no evidence (counted apart from failures)."""
    status: str
    """The grading run's status, or `patch_refused` / `no_patch` / `solver_error`."""
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cost_usd: float | None = None
    """Known only for models with published prices."""
    wall_s: float = 0.0
    candidates: int = 0
    best_reward: float | None = None
    patch: str = ""
    skills_shown: list[str] = Field(default_factory=list)
    trajectory_id: str | None = None
    error: str | None = None

    @property
    def key(self) -> str:
        return attempt_key(self.round, self.phase, self.condition, self.task_id, self.attempt)

    @property
    def pair_key(self) -> str:
        """Identifies the (task, attempt) across conditions, for the paired comparison."""
        return f"{self.task_id}#{self.attempt}"


#: Errors of the machine or the configuration (sandbox.errors' `SandboxUnavailable` family and OSError's, the
#: skillbank server dying under the agent: agent.session's `ServerLost`), not of the model: an attempt that ended in
#: one says nothing about the model.
SETUP_ERRORS = ("SandboxUnavailable", "SandboxConfigError", "InterpreterNotFound", "WorkspaceUnavailable",
                "BackendUnavailable", "WriteFailed", "OSError", "FileNotFoundError", "PermissionError",
                "ServerLost")  # fmt: skip


#: The model's API failing (pydantic-ai's `ModelAPIError` family: a server error, a timeout, a rate limit past its
#: retries, a refused connection), by the error's class name: like a setup failure, it says nothing about the model.
_API_ERROR_RE = re.compile(r"_?(?:HTTP)?Model[A-Za-z]*Error")
#: API errors of the configuration (the key, the model's name): every attempt would fail the same way.
CONFIG_API_ERRORS = ("ModelAuthenticationError", "ModelNotFoundError")


def error_class(error: str | None) -> str:
    """The class name an attempt's `error` starts with (`ModelServerError: status_code: 500, ...`)."""
    return (error or "").split(":", 1)[0].strip().lstrip("_").removeprefix("HTTP")


def is_api_error(error: str | None) -> bool:
    return _API_ERROR_RE.fullmatch(error_class(error)) is not None


def is_setup_failure(record: AttemptRecord) -> bool:
    """A `solver_error` the machine, the configuration or the model's API caused: not an attempt, so a rerun redoes
    it (an older log may hold the first two as finished attempts; API failures are logged, counted invalid, and
    redone by a rerun once the API answers)."""
    return record.status == "solver_error" and (error_class(record.error) in SETUP_ERRORS or is_api_error(record.error))


def attempt_key(round_: int, phase: str, condition: str, task_id: str, attempt: int) -> str:
    return f"r{round_}/{phase}/{condition}/{task_id}/{attempt}"


class AttemptLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, AttemptRecord] = {}
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            if text and not text.endswith("\n"):  # a line torn by a crash: cut it off before appending
                text = text[: text.rfind("\n") + 1]
                path.write_text(text, encoding="utf-8")
            for line in text.splitlines():
                try:
                    record = AttemptRecord.model_validate(json.loads(line))
                except (json.JSONDecodeError, ValidationError):
                    continue
                self.records[record.key] = record

    def done(self, key: str) -> bool:
        """Logged and not a setup failure: an older log may hold those as finished attempts (they were logged
        as `solver_error`s before the harness stopped on them); they are redone, the newer line wins."""
        record = self.records.get(key)
        return record is not None and not is_setup_failure(record)

    def append(self, record: AttemptRecord) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(record.model_dump_json() + "\n")
            out.flush()
            os.fsync(out.fileno())
        self.records[record.key] = record

    def select(self, *, round_: int, phase: Phase, condition: Condition) -> list[AttemptRecord]:
        return [r for r in self.records.values() if r.round == round_ and r.phase == phase and r.condition == condition]
