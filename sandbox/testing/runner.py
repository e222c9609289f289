"""The core of the `run_tests` tool: run a workspace's tests in a sandbox, read every test's outcome, score it.

The default command is the workspace's interpreter (see `sandbox.exec.interpreter`) as `-m pytest`, with a junit
report in the sandbox's scratch dir and the short summary on. `command` replaces it (another runner, pytest with
other options, a wrapper such as `make test`): pytest started anywhere in it writes its junit report there too
(`PYTEST_ADDOPTS`), and that report is trusted over the command's exit code and text; without one, the status comes
from the exit code alone. The MCP adapter adds `suggested_skills`, searched with `failure_queries`.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Literal

from sandbox.errorlines import last_error_line
from sandbox.errors import InterpreterNotFound, RunCancelled
from sandbox.exec.backends import open_sandbox
from sandbox.exec.base import Cancel, ExecResult
from sandbox.exec.interpreter import Interpreter, find_interpreter
from sandbox.exec.site_paths import pth_warnings
from sandbox.testing.arguments import check_backend, check_command, check_tests, check_timeout, check_workspace
from sandbox.testing.config import RunnerConfig
from sandbox.testing.failure_lines import search_line
from sandbox.testing.models import Reward, TestCase, TestRunResult
from sandbox.testing.parent_config import parent_config_files
from sandbox.testing.results import (
    PYTEST_COMMAND_ARGS,
    PYTEST_REPORT_ARGS,
    ParsedReport,
    merge_reports,
    parse_junit,
    parse_summary,
    summary_totals,
)
from sandbox.testing.reward import SyntaxReport, check_syntax, compute_reward, pass_rate, syntax_budget_s
from sandbox.testing.status import count_outcomes, decide_status, order_tests, output_tail, per_test_counts

__all__ = ["Reward", "RunnerConfig", "TestCase", "TestRunResult", "failure_queries", "run_tests"]


def run_tests(
    workspace: Path,
    *,
    tests: list[str] | None = None,
    command: str | None = None,
    timeout_s: int = 600,
    backend: Literal["auto", "local", "docker"] = "auto",
    config: RunnerConfig | None = None,
    cancel: Cancel | None = None,
) -> TestRunResult:
    """Run the tests of `workspace` and report them (the `run_tests` contract in DESIGN.md).

    Bad arguments raise `RequestRefused` (nothing runs); a requested backend that cannot run here raises
    `BackendUnavailable`. Everything the tests themselves do (fail, crash, hang, print 1 GB) is in the result.
    Setting `cancel` (from another thread) kills the run and everything it started and raises `RunCancelled`.
    """
    config = config or RunnerConfig()
    ws = check_workspace(workspace)
    timeout_s = check_timeout(timeout_s)
    backend_name = check_backend(backend)
    entries = check_tests(ws, tests)
    command = check_command(command)
    interpreter = _interpreter(ws, config, required=command is None)
    syntax = check_syntax(ws, budget_s=syntax_budget_s(timeout_s), memory=config.repo_memory)
    sandbox = open_sandbox(
        backend_name,
        ws,
        image=config.docker_image,
        local=config.local,
        docker=config.docker,
        ro_paths=[*(interpreter.roots if interpreter else ()), *parent_config_files(ws)],
        hidden=config.hidden_paths,
    )
    try:
        with sandbox.scratch() as scratch:
            junit_path = scratch / "junit.xml"
            argv, shown = _command(interpreter, command, entries, junit_path)
            env = run_env(ws, interpreter if command is not None else None, scratch)
            if command is not None:
                env["PYTEST_ADDOPTS"] = shlex.join([*PYTEST_COMMAND_ARGS, f"--junitxml={junit_path}"])
            run = sandbox.run(argv, cwd=ws, timeout=timeout_s, env=env, scratch=scratch, cancel=cancel)
            if run.cancelled:
                raise RunCancelled(f"the run was cancelled after {run.duration_s:g} s")
            junit = parse_junit(junit_path, config.message_chars, root=ws)
        name = sandbox.name
        warnings = sandbox.warnings
        if interpreter is not None:
            warnings += pth_warnings(interpreter.pth_dropped, interpreter.pth_refused, name)
    finally:
        sandbox.close()
    report = merge_reports(junit, parse_summary(run.stdout, config.message_chars))
    report.problem = junit.problem
    return _assemble(run, report, junit.found, command is not None, shown, name, warnings, syntax, config, ws)


def failure_queries(result: TestRunResult, limit: int = 5) -> list[str]:
    """Deduplicated `ExceptionType: message` lines of the failures (`search_line`), in result order, to search the
    skill store with.

    When the run failed before any test reported (a broken conftest, a crash), the last exception line of the
    output is used instead.
    """
    queries: list[str] = []
    seen: set[str] = set()
    candidates = [search_line(case) for case in result.tests if case.outcome in ("failed", "error")]
    if not any(candidates) and result.status in ("error", "failed"):
        last = last_error_line(result.output_tail)
        candidates = [last.text if last else None]
    for text in candidates:
        if not text:
            continue
        text = " ".join(text.split())
        key = text.lower()
        if key not in seen:
            seen.add(key)
            queries.append(text)
        if len(queries) >= limit:
            break
    return queries


def _interpreter(ws: Path, config: RunnerConfig, *, required: bool) -> Interpreter | None:
    try:
        return find_interpreter(ws, config.test_python, hidden=config.hidden_paths)
    except InterpreterNotFound:
        if required:
            raise
        return None


def _command(
    interpreter: Interpreter | None, command: str | None, entries: list[str], junit: Path
) -> tuple[list[str], str]:
    """The argv to run and the command as shown in the result."""
    if command is not None:
        shell = " ".join([command, *(shlex.quote(e) for e in entries)])
        return ["sh", "-c", shell], shell
    assert interpreter is not None
    argv = [str(interpreter.path), "-m", "pytest", *PYTEST_REPORT_ARGS, f"--junitxml={junit}", *entries]
    return argv, shlex.join(argv)


def run_env(ws: Path, interpreter: Interpreter | None = None, scratch: Path | None = None) -> dict[str, str]:
    """What the run adds to the sandbox's environment: the workspace's `.venv/bin` first on PATH (and VIRTUAL_ENV),
    then the directory of `interpreter` (given in `command` mode).

    A command's `pytest`, `python` and `python -m pytest` are then the default command's interpreter (its venv's
    `bin` when it is a venv), not whatever the sandbox's PATH finds: under bubblewrap or docker the operator's
    shims (pyenv, a `--user` install) lie under a HOME the sandbox does not show. An interpreter whose directory has
    no `python` (Debian's `/usr/bin/python3`) gets one in `scratch` (a script that runs it), next on the PATH.
    """
    dirs: list[str] = []
    env: dict[str, str] = {}
    venv = ws / ".venv"
    if (venv / "bin").is_dir():
        dirs.append(str(venv / "bin"))
        env["VIRTUAL_ENV"] = str(venv)
    if interpreter is not None and str(interpreter.path.parent) not in dirs:
        dirs.append(str(interpreter.path.parent))
        if scratch is not None and not os.path.lexists(interpreter.path.parent / "python"):
            dirs.append(str(_python_alias(scratch, interpreter.path)))
    if dirs:
        env["PATH"] = ":".join(dirs)
    return env


def _python_alias(scratch: Path, interpreter: Path) -> Path:
    """A directory in `scratch` holding `python`: a script that runs `interpreter` (a link would not do: a venv's
    interpreter finds its `pyvenv.cfg` next to the name it was started by)."""
    where = scratch / "python-alias"
    where.mkdir(exist_ok=True)
    script = where / "python"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(str(interpreter))} "$@"\n')
    script.chmod(0o755)
    return where


def _assemble(
    run: ExecResult,
    report: ParsedReport,
    junit_found: bool,
    command_mode: bool,
    shown: str,
    backend: str,
    sandbox_warnings: list[str],
    syntax: SyntaxReport,
    config: RunnerConfig,
    root: Path | None = None,
) -> TestRunResult:
    counts = count_outcomes(report, None if junit_found else summary_totals(run.stdout))
    status, warnings = decide_status(run, report, counts, junit_found=junit_found, command_mode=command_mode, root=root)
    tests, omitted = order_tests(report.tests, config.max_tests)
    tail, tail_truncated = output_tail(run, config.output_tail_chars)
    if run.truncated:
        warnings.append(f"output truncated: {run.stdout_bytes + run.stderr_bytes} bytes written, the tail is kept")
    if run.killed_leftovers:
        warnings.append("processes the tests left running were killed")
    valid = status in ("passed", "failed")
    if command_mode and counts["total"] == 0:
        rate = 1.0 if run.exit_code == 0 else 0.0
    else:
        once = per_test_counts(report, counts)  # a test whose teardown failed does not pass
        rate = pass_rate(once["passed"], once["failed"], once["errors"], once["xpassed"])
    # A command that failed without a test result to show (pytest not installed, a typo) may not have run any.
    unseen = command_mode and counts["total"] == 0 and run.exit_code != 0
    reward = compute_reward(
        syntax=syntax.score,
        ran=valid and not run.timed_out and report.collection_errors == 0 and not unseen,
        pass_rate=rate,
        valid=valid,
        weights=config.reward_weights,
    )
    return TestRunResult(
        status=status,
        total=counts["total"],
        passed=counts["passed"],
        failed=counts["failed"],
        errors=counts["errors"],
        skipped=counts["skipped"],
        xfailed=counts["xfailed"],
        xpassed=counts["xpassed"],
        duration_s=run.duration_s,
        exit_code=run.exit_code,
        backend=backend,
        command=shown,
        tests=tests,
        tests_omitted=omitted,
        reward=reward,
        output_tail=tail,
        output_truncated=tail_truncated or run.truncated,
        collection_errors=report.collection_errors,
        syntax_errors=syntax.problems,
        warnings=[*sandbox_warnings, *warnings, *syntax.notes],
    )
