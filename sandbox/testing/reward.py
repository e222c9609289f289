"""The reward of a test run: syntax, runtime and pass rate, combined with normalised weights.

- `syntax`: the share of changed Python files that compile (changed = differs from git HEAD, or untracked; every
  `.py` file when the workspace is not a git repo with a commit). 1.0 when no Python file changed.
- `runtime`: 1.0 when the suite ran (no collection error, no timeout, a usable report), else 0.0.
- `pass_rate`: (passed + xpassed) / (passed + xpassed + failed + errors) over the tests, each counted once by its
  listed outcome; skips and xfails count for nothing. A test whose teardown failed is an error here, although
  pytest's counts (and the result's) have it both as passed (or failed) and as an error: it does not pass.

The value is the weighted sum, and 0 when the run is invalid (status `error`, `timeout` or `no_tests`): a run that
proves nothing earns nothing, but its components are still returned so the agent sees what went wrong.
Files are compiled by this process's interpreter, never imported or run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel

from sandbox.syntax import syntax_error
from sandbox.testing.models import Reward, SyntaxProblem

#: Default weights; `Settings.reward_weights` (SKILLBANK_REWARD_WEIGHTS) overrides them.
DEFAULT_WEIGHTS: dict[str, float] = {"syntax": 0.2, "runtime": 0.2, "pass_rate": 0.6}
COMPONENTS = frozenset(DEFAULT_WEIGHTS)
#: Directories never searched for Python files when the workspace is not a git repo.
SKIP_DIRS = frozenset(
    {".git", ".hg", ".venv", "venv", "env", "node_modules", "__pycache__", ".tox", ".nox", "build", "dist"}
    | {".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs"}
)
MAX_FILES = 2000
MAX_FILE_BYTES = 2 * 1024 * 1024


class SyntaxReport(BaseModel):
    checked: int
    problems: list[SyntaxProblem]

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


def check_syntax(workspace: Path) -> SyntaxReport:
    """Compile the changed Python files of `workspace` (see the module docstring)."""
    files = changed_python_files(workspace)
    problems: list[SyntaxProblem] = []
    checked = 0
    for path in files[:MAX_FILES]:
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            source = path.read_bytes()
        except OSError:
            continue
        checked += 1
        rel = path.relative_to(workspace).as_posix()
        error = syntax_error(source, rel)
        if error is not None:
            problems.append(SyntaxProblem(path=rel, line=error[0], message=error[1]))
    return SyntaxReport(checked=checked, problems=problems)


def changed_python_files(workspace: Path) -> list[Path]:
    """Python files changed against HEAD or untracked; every Python file when there is no git HEAD."""
    names = _git_changed(workspace)
    if names is None:
        return sorted(_walk_python(workspace))
    out = []
    for name in sorted(set(names)):
        path = workspace / name
        if name.endswith(".py") and path.is_file() and not path.is_symlink():
            out.append(path)
    return out


def _git_changed(workspace: Path) -> list[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    # fsmonitor is switched off: a repo's own config could otherwise make git run a program of its choosing.
    base = [git, "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-C", str(workspace)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {"GIT_OPTIONAL_LOCKS": "0"}
    try:
        head = subprocess.run([*base, "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, env=env, timeout=30)
        if head.returncode != 0:
            return None
        diff = subprocess.run(
            [*base, "diff", "--name-only", "--relative", "--no-renames", "-z", "HEAD", "--"],
            capture_output=True,
            env=env,
            timeout=60,
        )
        untracked = subprocess.run(
            [*base, "ls-files", "-z", "--others", "--exclude-standard"], capture_output=True, env=env, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if diff.returncode != 0 or untracked.returncode != 0:
        return None
    raw = diff.stdout + b"\0" + untracked.stdout
    return [name for name in raw.decode(errors="surrogateescape").split("\0") if name]


def _walk_python(workspace: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        found += [Path(root) / f for f in files if f.endswith(".py")]
        if len(found) >= MAX_FILES:
            break
    return [p for p in found if not p.is_symlink()]
