"""Data models shared by every package: skills, trajectories and their steps.

These are plain pydantic models with no I/O. The JSONL line of a skill (import/export) is
`Skill.model_dump(mode="json")`; it is a superset of the Socratic-SWE skill registry line.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SKILL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9.+#_-]{0,63}$")

SkillStatus = Literal["active", "candidate"]

#: Pseudo-observations given to the distiller's prior when confidence is updated from outcomes.
PRIOR_STRENGTH = 2.0


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def posterior_confidence(prior: float, successes: int, failures: int, strength: float = PRIOR_STRENGTH) -> float:
    """Mean of the Beta posterior whose prior is Beta(prior*strength, (1-prior)*strength).

    With no outcomes this is the prior itself; every success pulls it towards 1, every failure towards 0,
    and after many outcomes it approaches the observed success rate.
    """
    alpha = prior * strength + successes
    beta = (1.0 - prior) * strength + failures
    return alpha / (alpha + beta)


class EditRewrite(BaseModel):
    """One token rewrite a lesson teaches, the user's identifiers as placeholders: `time.clock()` ->
    `time.perf_counter()`. Merging compares them; an empty side means a line added or removed."""

    model_config = ConfigDict(extra="forbid")

    before: str = Field(default="", max_length=300)
    after: str = Field(default="", max_length=300)


class Skill(BaseModel):
    """A distilled lesson: when you see `pattern`, do `strategy`."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    skill_id: str = Field(default_factory=lambda: new_id("sk"))
    """Stable identifier; import upserts by it."""
    title: str = Field(min_length=1, max_length=200)
    """One line naming the lesson."""
    pattern: str = Field(min_length=1, max_length=4000)
    """What the agent sees when the lesson applies: an error signature or a situation."""
    strategy: str = Field(min_length=1, max_length=8000)
    """What to do about it."""
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    """Current belief that the strategy works: the Beta posterior mean (see `posterior_confidence`)."""
    prior: float | None = Field(default=None, ge=0.0, le=1.0)
    """The distiller's (or author's) confidence before any outcome; defaults to the first `confidence`."""
    tags: list[str] = Field(default_factory=list, max_length=32)
    language: str | None = Field(default=None, max_length=40)
    repo: str | None = Field(default=None, max_length=200)
    sources: list[str] = Field(default_factory=list)
    """Trajectory ids (or other provenance) the lesson was learned from."""
    rule: list[EditRewrite] = Field(default_factory=list, max_length=3)
    """The edit rule the strategy leads with, learned from the fixing patches (leading rewrite first); may be empty."""
    status: SkillStatus = "active"
    """`active`: returned by search and suggestions. `candidate`: distilled under review (`SKILLBANK_REVIEW`),
    returned by nothing until `skillbank skills approve ID`. Files written before the field read as active."""
    uses: int = Field(default=0, ge=0)
    """How many times the skill was returned to an agent."""
    successes: int = Field(default=0, ge=0)
    failures: int = Field(default=0, ge=0)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    @field_validator("skill_id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not SKILL_ID_RE.match(value):
            raise ValueError("skill_id must be 1-128 characters of letters, digits, '.', '_', ':' or '-'")
        return value

    @field_validator("tags")
    @classmethod
    def _check_tags(cls, value: list[str]) -> list[str]:
        out: list[str] = []
        for tag in value:
            tag = tag.strip().lower()
            if not TAG_RE.match(tag):
                raise ValueError(f"tag {tag!r} must be lowercase letters, digits and . + # _ - (at most 64)")
            if tag not in out:
                out.append(tag)
        return out

    @field_validator("language")
    @classmethod
    def _check_language(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().lower()
        return value or None

    @field_validator("repo")
    @classmethod
    def _check_repo(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value:
            return None
        if any(ch.isspace() for ch in value):
            raise ValueError("repo must not contain whitespace")
        return value

    @model_validator(mode="after")
    def _fill_prior(self) -> Skill:
        if self.prior is None:
            self.prior = self.confidence
        return self

    def recompute_confidence(self) -> None:
        """Set `confidence` from the prior and the recorded outcomes."""
        self.confidence = posterior_confidence(self.prior or 0.5, self.successes, self.failures)

    def document(self) -> str:
        """The text that is embedded and keyword-indexed for search."""
        return f"{self.title}\n{self.pattern}\n{self.strategy}"


StepKind = Literal["thought", "action", "observation", "tool_call", "message"]
Outcome = Literal["success", "failure", "abandoned"]
TrajectoryStatus = Literal["open", "closed"]


#: The start of an ISO 8601 date-time: a date, `T` (or a space), hours and minutes.
_DATE_TIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")

#: The longest `Step.content` and trajectory `task` stored (`record_trajectory` refuses longer ones).
MAX_STEP_CONTENT_CHARS = 1_000_000
MAX_TASK_CHARS = 20_000


class Step(BaseModel):
    """One step of a trajectory: an agent's thought, a tool call and its result, a message."""

    model_config = ConfigDict(extra="forbid")

    kind: StepKind
    content: str = Field(default="", max_length=MAX_STEP_CONTENT_CHARS)
    tool: str | None = Field(default=None, max_length=200)
    args: dict[str, Any] | None = None
    result: Any | None = None
    ok: bool | None = None
    ts: datetime | None = None
    duration_s: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    tokens_in: int | None = Field(default=None, ge=0)
    tokens_out: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    @field_validator("ts", mode="before")
    @classmethod
    def _a_date_time(cls, value: Any) -> Any:
        """A step's values are stored as given, never converted: a number (seconds? milliseconds?) or a date with
        no time is refused rather than guessed at."""
        if value is None or isinstance(value, datetime) or (isinstance(value, str) and _DATE_TIME_RE.match(value)):
            return value
        raise ValueError(
            "must be an ISO 8601 date-time string with its time, e.g. 2026-12-05T10:00:00Z (numbers and dates "
            "alone are not converted)"
        )


#: How deep a step's `args` or `result` may nest: deeper, it cannot be stored, redacted or served back.
MAX_STEP_NESTING = 100


def nesting_depth(value: Any, stop: int) -> int:
    """How many lists and dicts are inside one another in `value` (a scalar: 0), counted up to `stop + 1`."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list | tuple) else []
    while todo:
        item, depth = todo.pop()
        if depth > deepest:
            deepest = depth
            if deepest > stop:
                return deepest
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list | tuple):
                todo.append((child, depth + 1))
    return deepest


class StoredStep(Step):
    """A step as stored: with its index in the trajectory and a timestamp always set."""

    index: int = Field(ge=0)
    ts: datetime  # type: ignore[assignment]


class Trajectory(BaseModel):
    """One agent session: the task, every step, the outcome, and the skills it was shown."""

    model_config = ConfigDict(extra="forbid")

    trajectory_id: str = Field(default_factory=lambda: new_id("traj"))
    task: str | None = None
    outcome: Outcome | None = None
    status: TrajectoryStatus = "open"
    source: str | None = None
    """The client that produced it: `mcp:<clientInfo.name>`, `claude-code`, `skillbank-agent`..."""
    workspace: str | None = None
    repo: str | None = None
    skills_shown: list[str] = Field(default_factory=list)
    reward: float | None = None
    """The last reward that `run_tests` computed in this trajectory, if any."""
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    closed_at: datetime | None = None
    steps: list[StoredStep] = Field(default_factory=list)
