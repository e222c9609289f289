"""`skillbank tasks synth | check`: verified bug-fix tasks from a project's tests (see agent/tasks/synth.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from mcp_server.cli.common import clean_errors, fail, load_settings, progress_bar
from mcp_server.settings import absolute_program

app = typer.Typer(help="Synthesize and check task folders for `skillbank eval`.", no_args_is_help=True)


@app.command("synth")
def synth(
    out: Annotated[Path, typer.Option(help="Directory the task folders are written to.")],
    repo: Annotated[Path | None, typer.Option(help="A project with a pytest suite that passes.")] = None,
    pypi: Annotated[str | None, typer.Option(help="NAME==VERSION: download that sdist from PyPI and use it.")] = None,
    n: Annotated[int, typer.Option("--n", min=1, max=10_000, help="How many tasks to make.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the candidate order.")] = 0,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Parallel test runs (each a copy of the project).")] = 2,
    timeout_s: Annotated[
        int | None, typer.Option(min=1, help="Per-mutant suite timeout (default: 4 x the original's time + 20 s).")
    ] = None,
    max_candidates: Annotated[int | None, typer.Option(min=1, help="Verify at most this many mutants.")] = None,
    python: Annotated[str | None, typer.Option(help="Interpreter (with pytest) that runs the project's tests.")] = None,
    llm: Annotated[str | None, typer.Option(help="Model for the problem statements (default: offline).")] = None,
    use_skills: Annotated[
        bool, typer.Option("--skills/--no-skills", help="Weight operators by the skill bank's error classes.")
    ] = True,
    project: Annotated[str | None, typer.Option(help="Project name in task ids (default: the source's).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Mutate the code the tests cover; keep mutants that break tests; write them as task folders."""
    from agent.tasks.grading import check_test_python
    from agent.tasks.pypi import fetch_sdist, parse_spec
    from agent.tasks.synth import SynthConfig, SynthError, synthesize
    from agent.tasks.weights import read_bank_skills

    if (repo is None) == (pypi is None):
        fail("pass exactly one of --repo DIR or --pypi NAME==VERSION")
    if out.exists() and not out.is_dir():
        fail(f"--out {out} is not a directory")
    settings = load_settings()
    test_python = absolute_program(python) if python else settings.test_python or sys.executable
    with clean_errors():
        # Bad input (exit 2) is refused before anything is downloaded, run or written.
        spec = parse_spec(pypi) if pypi is not None else None
        check_test_python(test_python, "--python" if python else "SKILLBANK_TEST_PYTHON")
        try:
            if spec is not None:
                name, version = spec
                cache = settings.home / "sdists" / f"{name}-{version}"
                root = _root(cache / "src") if (cache / "src").is_dir() else fetch_sdist(f"{name}=={version}", cache)
                source, label = f"pypi:{name}=={version}", project or name
            else:
                assert repo is not None
                if not repo.is_dir():
                    fail(f"--repo {repo} is not a directory")
                root, source, label = repo, f"repo:{(project or repo.resolve().name)}", project or repo.resolve().name
            model = None
            if llm is not None:
                from agent.llm import resolve_model

                model = resolve_model(llm, os.environ)
            skills = read_bank_skills(settings.home) if use_skills else []
            config = SynthConfig(
                n=n,
                seed=seed,
                workers=workers,
                timeout_s=timeout_s,
                test_python=test_python,
                max_candidates=max_candidates,
            )
            with progress_bar() as progress:
                bar = progress.add_task(f"verifying mutants of {label} (0/{n} tasks)", total=None)
                report = synthesize(
                    root,
                    out,
                    config,
                    project=label,
                    source=source,
                    skills=skills,
                    statement_model=model,
                    on_candidates=lambda total: progress.update(bar, total=total),
                    on_verdict=lambda _v, kept: progress.update(
                        bar, advance=1, description=f"verifying mutants of {label} ({kept}/{n} tasks)"
                    ),
                )
        except SynthError as exc:
            fail(str(exc), 1)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        typer.echo(report.summary())
        typer.echo(f"wrote {len(report.tasks)} task folder(s) to {out}")
    if not report.made:
        raise typer.Exit(1)


@app.command("check")
def check(
    tasks: Annotated[Path, typer.Argument(help="A task folder or a directory of them.")],
    gold: Annotated[bool, typer.Option(help="Also apply each gold patch and grade it (runs the tests).")] = False,
    python: Annotated[str | None, typer.Option(help="Interpreter that runs the tests.")] = None,
) -> None:
    """Check task folders against the contract (and, with --gold, that each gold patch resolves its task)."""
    from agent.tasks.grading import check_test_python, grade_patch
    from agent.tasks.model import load_tasks

    settings = load_settings()
    test_python = absolute_program(python) if python else settings.test_python or sys.executable
    with clean_errors():
        folders = load_tasks(tasks)
        if gold:
            check_test_python(test_python, "--python" if python else "SKILLBANK_TEST_PYTHON")
        bad = 0
        for tf in folders:
            if not gold:
                typer.echo(f"ok   {tf.task.task_id}")
                continue
            result = grade_patch(tf, tf.gold_patch, test_python=test_python)
            bad += not result.resolved
            word = "ok  " if result.resolved else "FAIL"
            typer.echo(
                f"{word} {tf.task.task_id}: gold patch {result.status}, fail_to_pass "
                f"{result.fail_to_pass_passed}/{result.fail_to_pass_total}, pass_to_pass "
                f"{result.pass_to_pass_passed}/{result.pass_to_pass_total}"
            )
            why = None if result.resolved else (result.patch_error or result.detail)
            if why:
                typer.echo(f"     {' '.join(why.split())[:500]}")
    typer.echo(f"{len(folders)} task(s) checked" + (f", {bad} not resolved by their gold patch" if gold else ""))
    if bad:
        raise typer.Exit(1)


def _root(src: Path) -> Path:
    roots = [p for p in src.iterdir() if p.is_dir()]
    return roots[0] if len(roots) == 1 else src
