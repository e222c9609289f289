"""Typed summaries of tool results, as stored in a `tool_call` step's `result`: one model per tool.

The MCP tools write them (`PatchSummary(...).model_dump(mode="json")`) and the distillers read them back
(`PatchSummary.read(step.result)`), so the shape is defined once instead of being an ad-hoc dict on one side and
string parsing on the other. Reading is lenient: steps also come from agents (`record_trajectory` takes any
result) and from stored trajectories written before these models existed (`apply_patch` files were
`"action path"` strings), so a field of the wrong type reads as empty and `read` returns None only when the
result cannot be that tool's summary at all.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skills_store.models import Trajectory

FileAction = Literal["modify", "add", "delete", "rename"]
RunStatus = Literal["passed", "failed", "error", "timeout", "no_tests"]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class Summary(BaseModel):
    """Base: unknown keys are kept out, a summary that does not validate reads as None."""

    model_config = ConfigDict(extra="ignore")

    @classmethod
    def read(cls, result: Any) -> Self | None:
        if not isinstance(result, dict):
            return None
        try:
            return cls.model_validate(result)
        except ValidationError:
            return None


class FileChange(BaseModel):
    action: FileAction | str
    path: str


class PatchSummary(Summary):
    """`apply_patch`: whether it applied and which files it touched."""

    applied: bool = False
    files: list[FileChange] = Field(default_factory=list)
    fuzzy: bool = False
    syntax_errors: int = 0

    @field_validator("files", mode="before")
    @classmethod
    def _old_files(cls, value: Any) -> list[Any]:
        """Before the typed summary a file was stored as `"modify path"`; a path may contain spaces."""
        out: list[Any] = []
        for item in _list(value):
            if isinstance(item, str):
                action, _, path = item.partition(" ")
                out.append({"action": action, "path": path} if path else {"action": "modify", "path": action})
            elif isinstance(item, dict | FileChange):
                out.append(item)
        return out

    @field_validator("syntax_errors", mode="before")
    @classmethod
    def _count(cls, value: Any) -> int:
        return value if isinstance(value, int) else len(_list(value))


class TestFailure(BaseModel):
    __test__ = False  # not a pytest class

    id: str = ""
    message: str = ""

    @field_validator("id", "message", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return "" if value is None else str(value)


class TestRunSummary(Summary):
    """`run_tests`: the status, the counts, and the failures the distiller turns into error signatures."""

    __test__ = False  # not a pytest class

    status: RunStatus
    passed: int = 0
    failed: int = 0
    errors: int = 0
    failing: list[str] = Field(default_factory=list)
    """Ids of the failed and errored tests (at most 20)."""
    failures: list[TestFailure] = Field(default_factory=list)
    """The same tests with their (capped) messages."""
    backend: str | None = None
    reward: float | None = None
    """This run's reward (None in steps stored before it was kept); the trajectory's `reward` is the last one."""

    @field_validator("failing", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> list[str]:
        return [str(v) for v in _list(value)]

    @field_validator("failures", mode="before")
    @classmethod
    def _failures(cls, value: Any) -> list[Any]:
        return [v for v in _list(value) if isinstance(v, dict | TestFailure)]

    @field_validator("passed", "failed", "errors", mode="before")
    @classmethod
    def _int(cls, value: Any) -> int:
        return value if isinstance(value, int) else 0

    @field_validator("reward", mode="before")
    @classmethod
    def _reward(cls, value: Any) -> float | None:
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class SearchSummary(Summary):
    """`search_skills`: the skill ids returned, best first."""

    returned: list[str] = Field(default_factory=list)
    took_ms: float = 0.0


class RecordSummary(Summary):
    """`record_trajectory`: what the agent declared about its session (the steps themselves are stored as sent)."""

    used_skills: list[str] = Field(default_factory=list)
    """The skills the agent says it applied; the outcome pass moves only their confidence."""


def used_skills(trajectory: Trajectory) -> list[str]:
    """The skills the agent said it applied (`record_trajectory(used_skills=...)`), first mention first.

    Needs the trajectory's steps (`store.get(tid)`, not `with_steps=False`). Each call that named skills stored a
    `tool_call` step of `record_trajectory` whose result is a `RecordSummary`.
    """
    seen: dict[str, None] = {}
    for step in trajectory.steps:
        if step.kind == "tool_call" and step.tool == "record_trajectory":
            summary = RecordSummary.read(step.result)
            if summary is not None:
                seen.update(dict.fromkeys(summary.used_skills))
    return list(seen)
