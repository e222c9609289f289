"""`skillbank agent "TASK"`: the bundled pydantic-ai agent on a workspace, through the skillbank server.

A thin adapter over `agent.run.solve`: settings and the environment are read here, the model is resolved up front
(a missing key or a bad base URL is one line naming the variable, exit 2), progress goes to stderr and the
summary to stdout (`--json`: one object). Exit status: 0 when the tests pass at the end, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer

from mcp_server.cli.common import clean_errors, fail, load_settings, unreachable_hint
from mcp_server.settings import Settings


def _server_env(settings: Settings) -> dict[str, str]:
    """This process's environment with the path settings as read here (absolute): the server runs in the workspace,
    where a relative `SKILLBANK_HOME` would name a directory inside the repository under test."""
    env = {**os.environ, "SKILLBANK_HOME": str(settings.home)}
    if settings.test_python:
        env["SKILLBANK_TEST_PYTHON"] = settings.test_python
    return env


def _check_reachable(result: Any, spec: str) -> None:
    hint = unreachable_hint(result.error, spec) if result.requests <= 1 else None
    if hint:
        fail(hint)


def _line(result: Any) -> str:
    tests_line = f"{result.tests.passed}/{result.tests.total} tests pass" if result.tests else "tests never ran"
    return (
        f"{result.outcome}: reward {result.reward:.2f}, {tests_line}, {result.tokens} tokens, "
        f"{result.requests} requests, {result.wall_s:.1f} s, trajectory {result.trajectory_id}"
    )


def _report_candidates(picked: Any, spec: str, as_json: bool) -> None:
    from agent.candidates import table

    rows = table(picked)
    for attempt in picked.attempts:
        if attempt.result is not None and attempt.result.error:
            _check_reachable(attempt.result, spec)
    winner = picked.winner
    if as_json:
        summary = _summary(winner) if winner is not None else {"outcome": "failure"}
        typer.echo(json.dumps({**summary, "best": picked.best, "applied_files": picked.applied_files,
                               "apply_error": picked.apply_error, "candidates": rows}))  # fmt: skip
        return
    typer.echo(f"{'':2}{'#':>2} {'reward':>6} {'tests':>7} {'tokens':>7} {'reqs':>4} {'diff':>5}  outcome")
    for r in rows:
        reward = f"{r['reward']:.2f}" if r["reward"] is not None else "-"
        mark = "*" if r["best"] else " "
        typer.echo(f"{mark:2}{r['attempt']:>2} {reward:>6} {r['tests']:>7} {r['tokens']:>7} {r['requests']:>4} "
                   f"{r['diff_lines']:>5}  {r['outcome']}{' (' + r['error'] + ')' if r['error'] else ''}")  # fmt: skip
    if picked.apply_error:
        typer.echo(f"the best attempt ({picked.best}) could not be applied: {picked.apply_error}")
    elif winner is not None:
        applied = ", ".join(picked.applied_files) or "no changes"
        typer.echo(f"applied attempt {picked.best}: {applied}")
        typer.echo(_line(winner))


def _summary(result: Any) -> dict[str, Any]:
    data = result.model_dump(mode="json", exclude={"final_diff", "message"})
    data["wall_s"] = round(result.wall_s, 2)
    return data


def agent(
    task: Annotated[str, typer.Argument(help="What to do, e.g. 'make test_parse pass'.")],
    workspace: Annotated[Path, typer.Option(help="The repository to work on (edited in place).")] = Path("."),
    model: Annotated[
        str | None,
        typer.Option(
            envvar="SKILLBANK_MODEL",
            help="openai:NAME, openai-chat:NAME, openai-responses:NAME, anthropic:NAME, local:NAME (SKILLBANK_MODEL).",
        ),
    ] = None,
    no_skills: Annotated[bool, typer.Option("--no-skills", help="Ablation: no skill search, no skills shown.")] = False,
    max_requests: Annotated[int, typer.Option(min=1, help="Model requests before stopping.")] = 50,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Total tokens before stopping.")] = None,
    timeout: Annotated[float | None, typer.Option(min=1, help="Wall-clock seconds before stopping.")] = None,
    tests: Annotated[list[str] | None, typer.Option("--test", help="Test id to run (repeat; default: all).")] = None,
    candidates: Annotated[int, typer.Option(min=1, max=32, help="Best-of-N attempts on isolated copies.")] = 1,
    parallel: Annotated[int, typer.Option(min=1, max=32, help="Attempts run at once (with --candidates).")] = 1,
    stream: Annotated[bool, typer.Option(help="Stream model responses.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary on stdout.")] = False,
) -> None:
    """Solve a task with the bundled agent: test-first, skills from earlier sessions, edits by apply_patch only."""
    settings = load_settings()
    if model is None:
        fail("no model given: pass --model openai:gpt-4o (or anthropic:..., openai-chat:..., openai-responses:..., "
             "local:...), or set SKILLBANK_MODEL")  # fmt: skip
    if not workspace.is_dir():
        fail(f"--workspace {workspace} is not a directory")
    if tests:
        from sandbox.errors import RequestRefused
        from sandbox.testing.arguments import check_tests

        try:  # before the model runs: a typo in --test would cost a whole session and end as a plain failure
            check_tests(workspace.resolve(), list(tests))
        except RequestRefused as exc:
            fail(f"--test: {exc}")
    with clean_errors():
        from agent.llm import resolve_model
        from agent.run import Limits, solve
        from agent.server import ServerCommand

        resolved = resolve_model(model, os.environ)
        exe = Path(sys.executable).with_name("skillbank")
        server = (ServerCommand(str(exe), (), _server_env(settings)) if exe.exists()
                  else ServerCommand(sys.executable, ("-m", "mcp_server"), _server_env(settings)))  # fmt: skip
        limits = Limits(max_requests=max_requests, max_tokens=max_tokens, timeout_s=timeout)

        def progress(line: str) -> None:
            typer.echo(f"  {line}", err=True)

        if candidates > 1:
            from agent.candidates import best_of_n

            picked = anyio.run(
                lambda: best_of_n(
                    task,
                    workspace,
                    resolved,
                    candidates,
                    parallel=parallel,
                    use_skills=not no_skills,
                    limits=limits,
                    server=server,
                    progress=progress,
                    stream=stream,
                    tests=tests,
                )
            )
            _report_candidates(picked, model, as_json)
            won = picked.winner is not None and picked.winner.outcome == "success" and picked.apply_error is None
            raise typer.Exit(0 if won else 1)
        result = anyio.run(
            lambda: solve(
                task,
                workspace,
                resolved,
                use_skills=not no_skills,
                limits=limits,
                server=server,
                progress=progress,
                stream=stream,
                tests=tests,
            )
        )
    _check_reachable(result, model)
    if as_json:
        typer.echo(json.dumps(_summary(result)))
    else:
        typer.echo(result.message)
        typer.echo(_line(result))
    raise typer.Exit(0 if result.outcome == "success" else 1)
