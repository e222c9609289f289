"""The result of `run_tests`, as the MCP tool returns it (the contract in DESIGN.md, `run_tests`)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

RunStatus = Literal["passed", "failed", "error", "timeout", "no_tests"]
Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
#: Order of tests in a result: what needs attention first.
OUTCOME_ORDER: dict[str, int] = {"failed": 0, "error": 1, "xpassed": 2, "passed": 3, "xfailed": 4, "skipped": 5}


class TestCase(BaseModel):
    """One test's outcome."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    id: str
    """The pytest node id (`tests/test_x.py::TestA::test_b[1]`), or the module path for a collection error."""
    outcome: Outcome
    duration_s: float = 0.0
    message: str | None = None
    """For failures and errors: the crash line and the end of the traceback, trimmed. For skips: the reason."""


class SyntaxProblem(BaseModel):
    """A changed Python file that does not compile."""

    path: str
    line: int | None
    message: str


class Reward(BaseModel):
    """A score in [0, 1] of the run, with the components it is made of (each in [0, 1])."""

    value: float
    components: dict[str, float]
    weights: dict[str, float] = Field(default_factory=dict)
    """The normalised weights the components were combined with."""
    valid: bool = True
    """False when the run did not produce a usable result (error, timeout, no tests); then `value` is 0."""


class TestRunResult(BaseModel):
    """What a test run did: status, counts, every test (failed first), a reward, and the tail of the output."""

    __test__: ClassVar[bool] = False

    status: RunStatus
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xfailed: int = 0
    xpassed: int = 0
    duration_s: float
    exit_code: int | None
    """The command's exit status (128+N when killed by signal N); None when it was killed for the timeout."""
    backend: str
    """`docker`, `local+bwrap` or `local`."""
    command: str
    """The command as run, shell-quoted."""
    tests: list[TestCase] = Field(default_factory=list)
    tests_omitted: int = 0
    """Tests left out of `tests` to keep the result small (only passing or skipped ones are left out)."""
    reward: Reward
    suggested_skills: list[dict[str, Any]] = Field(default_factory=list)
    """Filled by the MCP adapter from the skill store (see `failure_queries`)."""
    output_tail: str
    """The end of the output (stdout, then stderr), capped."""
    output_truncated: bool = False
    collection_errors: int = 0
    syntax_errors: list[SyntaxProblem] = Field(default_factory=list)
    """Changed Python files that do not compile (they cost the reward its `syntax` share)."""
    warnings: list[str] = Field(default_factory=list)
    """What could not be isolated or trusted in this run (no bubblewrap, a report that disagrees with the exit)."""
