"""The reward of a test run: syntax, runtime and pass rate, combined with normalised weights.

- `syntax`: the share of changed Python files that compile (changed = differs from git HEAD, or untracked; every
  `.py` file when the workspace is not a git repo with a commit; see `sandbox.testing.changes`). 1.0 when no
  Python file changed. It is checked on the host before each run, within a budget (`syntax_budget_s`).
- `runtime`: 1.0 when the suite ran (no collection error, no timeout, a usable report), else 0.0.
- `pass_rate`: (passed + xpassed) / (passed + xpassed + failed + errors) over the tests, each counted once by its
  listed outcome; skips and xfails count for nothing. A test whose teardown failed is an error here, although
  pytest's counts (and the result's) have it both as passed (or failed) and as an error: it does not pass.

The value is the weighted sum, and 0 when the run is invalid (status `error`, `timeout` or `no_tests`): a run that
proves nothing earns nothing, but its components are still returned so the agent sees what went wrong.
Files are compiled by this process's interpreter (in a child process), never imported or run. Names that are not
UTF-8 are shown C-quoted, as git shows them (`shown_name`).
"""

from __future__ import annotations

import io
import marshal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field

from sandbox.patch.paths import shown_name
from sandbox.syntax import syntax_error
from sandbox.testing.changes import Deadline, RepoMemory, Source, changed_sources
from sandbox.testing.models import Reward, SyntaxProblem
from sandbox.worker_env import worker_env

#: Default weights; `Settings.reward_weights` (SKILLBANK_REWARD_WEIGHTS) overrides them.
DEFAULT_WEIGHTS: dict[str, float] = {"syntax": 0.2, "runtime": 0.2, "pass_rate": 0.6}
COMPONENTS = frozenset(DEFAULT_WEIGHTS)
MAX_FILES = 2000
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_TOTAL_BYTES = 32 * 1024 * 1024
#: The syntax check before a run gets this share of the run's timeout_s, at most `MAX_SYNTAX_S` (see
#: `syntax_budget_s`): it runs on the host, outside the sandbox's timeout.
SYNTAX_SHARE = 0.1
MAX_SYNTAX_S = 10.0
#: Up to this much source is compiled in-process (a pathological 256 KB compiles in about 0.25 s; the usual few
#: changed files in a few ms, where starting the child costs 30 ms); more goes to a child killed at the budget.
IN_PROCESS_BYTES = 256 * 1024


class SyntaxReport(BaseModel):
    checked: int
    problems: list[SyntaxProblem]
    notes: list[str] = Field(default_factory=list)
    """What the check could not do (the budget ran out, git was not trusted): warnings of the run."""

    @property
    def score(self) -> float:
        return 1.0 if self.checked == 0 else round((self.checked - len(self.problems)) / self.checked, 4)


def normalise_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """Weights over the three components, summing to 1; raises ValueError, saying what to change, on bad ones."""
    weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
    unknown = set(weights) - COMPONENTS
    if unknown:
        raise ValueError(f"unknown reward components {sorted(unknown)}; use {sorted(COMPONENTS)}")
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise ValueError("reward weights must be non-negative and not all zero")
    total = sum(weights.values())
    return {name: round(weights.get(name, 0.0) / total, 6) for name in sorted(COMPONENTS)}


def compute_reward(*, syntax: float, ran: bool, pass_rate: float, valid: bool, weights: Mapping[str, float]) -> Reward:
    components = {"syntax": round(syntax, 4), "runtime": 1.0 if ran else 0.0, "pass_rate": round(pass_rate, 4)}
    norm = normalise_weights(weights)
    value = sum(norm[name] * components[name] for name in components) if valid else 0.0
    return Reward(value=round(value, 4), components=components, weights=norm, valid=valid)


def pass_rate(passed: int, failed: int, errors: int, xpassed: int = 0) -> float:
    ran = passed + xpassed + failed + errors
    return 0.0 if ran == 0 else (passed + xpassed) / ran


def syntax_budget_s(timeout_s: float) -> float:
    """How long the syntax check before a run may take: a tenth of the run's `timeout_s`, 1 to 10 s."""
    return min(max(timeout_s * SYNTAX_SHARE, 1.0), MAX_SYNTAX_S)


def check_syntax(workspace: Path, *, budget_s: float | None = None, memory: RepoMemory | None = None) -> SyntaxReport:
    """Compile the changed Python files of `workspace` (see the module docstring) within `budget_s` seconds.

    Beyond `IN_PROCESS_BYTES` the files are compiled in a child process (plain Python, `-I -S`) that is killed when
    the budget runs out, as one compile of a pathological file can take seconds; what the budget or a limit left out
    is not checked, and a note says so. `memory` keeps the workspace's git repository as first seen
    (`sandbox.testing.changes`).
    """
    deadline = Deadline(budget_s)
    changes = changed_sources(
        workspace,
        memory=memory,
        deadline=deadline,
        max_files=MAX_FILES,
        max_file_bytes=MAX_FILE_BYTES,
        max_total_bytes=MAX_TOTAL_BYTES,
    )
    answers = _compile(changes.sources, deadline) if changes.sources else []
    problems = [
        SyntaxProblem(path=shown_name(source.rel), line=error[0], message=error[1])
        for source, error in zip(changes.sources, answers, strict=False)
        if error is not None
    ]
    notes = list(changes.notes)
    if changes.cut or len(answers) < len(changes.sources):
        if deadline.passed:
            why = f"its {budget_s:g} s budget ran out"
        elif changes.cut:
            why = f"its limits of {MAX_FILES} files and {MAX_TOTAL_BYTES >> 20} MB were reached"
        else:
            why = "the compiling process stopped early"
        notes.append(
            f"the syntax check compiled {len(answers)} changed Python file(s) and stopped there ({why}); "
            "the rest were not checked"
        )
    return SyntaxReport(checked=len(answers), problems=problems, notes=notes)


def changed_python_files(workspace: Path, memory: RepoMemory | None = None) -> list[Path]:
    """Python files changed against HEAD or untracked; every Python file when there is no git HEAD."""
    changes = changed_sources(workspace, memory=memory, max_files=MAX_FILES, max_file_bytes=MAX_FILE_BYTES)
    return [workspace / source.rel for source in changes.sources]


_CHILD = (
    "import sys, marshal\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "from sandbox.undumpable import make_undumpable\n"
    "make_undumpable()\n"  # the workspace's sources are not for a test's eyes (see `sandbox.undumpable`)
    "from sandbox.syntax import syntax_error\n"
    "out = sys.stdout.buffer\n"
    "for name, source in marshal.load(sys.stdin.buffer):\n"
    "    marshal.dump(syntax_error(source, name), out)\n"
    "    out.flush()\n"
)
_ROOT = Path(__file__).resolve().parents[2]
Error = tuple[int | None, str] | None


def _compile(sources: list[Source], deadline: Deadline) -> list[Error]:
    """Each source's syntax error (or None), in order, for as many as the child compiled before `deadline`."""
    if sum(len(s.data) for s in sources) <= IN_PROCESS_BYTES:
        return _compile_here(sources, deadline)
    jobs = marshal.dumps([(shown_name(s.rel), s.data) for s in sources])
    try:
        child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _CHILD, str(_ROOT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=worker_env(),  # the server's keys and tokens stay out of its /proc/PID/environ
        )
    except OSError:  # no child process here: compile in-process, the deadline checked between files
        return _compile_here(sources, deadline)
    try:
        out, _ = child.communicate(jobs, timeout=max(deadline.left(), 0.01))
    except subprocess.TimeoutExpired:
        child.kill()
        out, _ = child.communicate()
    answers: list[Error] = []
    stream = io.BytesIO(out)
    while len(answers) < len(sources):
        try:
            answer = marshal.load(stream)
        except (EOFError, ValueError, TypeError):
            break
        answers.append(None if answer is None else (answer[0], str(answer[1])))
    return answers


def _compile_here(sources: list[Source], deadline: Deadline) -> list[Error]:
    answers: list[Error] = []
    for source in sources:
        if deadline.passed:
            break
        answers.append(syntax_error(source.data, shown_name(source.rel)))
    return answers
