"""`skillbank eval`: pass rate with vs without skills over rounds of learning (see agent/eval/harness.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.progress import (
    TaskID,
)

from mcp_server.cli.common import clean_errors, load_settings, progress_bar
from mcp_server.settings import absolute_program


def eval_(
    tasks: Annotated[Path, typer.Option(help="A directory of task folders (e.g. from `skillbank tasks synth`).")],
    model: Annotated[str, typer.Option(help="openai:NAME, anthropic:NAME, local:NAME, or scripted:gold|mixed|...")],
    out: Annotated[Path, typer.Option(help="Output dir: split, attempts log, results.json, report.html.")],
    rounds: Annotated[int, typer.Option(min=1, max=100, help="Rounds of train -> distill -> held-out.")] = 1,
    attempts: Annotated[int, typer.Option(min=1, max=50, help="K: attempts per held-out task and condition.")] = 1,
    mode: Annotated[Literal["oneshot", "agentic"], typer.Option(help="oneshot (Agentless) or the bundled agent.")] = (
        "oneshot"
    ),
    seed: Annotated[int, typer.Option(help="Seed of the held-out split and of sampling.")] = 0,
    heldout: Annotated[float, typer.Option(min=0.01, max=0.99, help="Share of tasks held out.")] = 0.5,
    candidates: Annotated[int, typer.Option(min=1, max=20, help="N: one-shot answers sampled per attempt.")] = 3,
    train_attempts: Annotated[int, typer.Option(min=1, max=10, help="Attempts per training task per round.")] = 1,
    timeout_s: Annotated[int, typer.Option(min=5, help="Timeout of each test run.")] = 300,
    max_requests: Annotated[int, typer.Option(min=1, help="Agentic: model requests per attempt.")] = 30,
    max_train: Annotated[int | None, typer.Option(min=1, help="Use at most this many training tasks.")] = None,
    max_heldout: Annotated[int | None, typer.Option(min=1, help="Use at most this many held-out tasks.")] = None,
    python: Annotated[str | None, typer.Option(help="Interpreter (with pytest) that runs the tasks' tests.")] = None,
    embedder: Annotated[str | None, typer.Option(help="Embedder of the eval's skill bank (default: settings).")] = None,
    starter_skills: Annotated[bool, typer.Option(help="Seed the eval's bank with the starter pack.")] = False,
) -> None:
    """Solve training tasks with skills, distill, then held-out tasks with and without skills; report the difference."""
    from agent.eval.harness import EvalConfig, run_eval
    from agent.tasks.grading import check_test_python

    settings = load_settings()
    test_python = absolute_program(python) if python else settings.test_python or sys.executable
    with clean_errors():  # before anything is written, naming where the interpreter came from
        check_test_python(test_python, "--python" if python else "SKILLBANK_TEST_PYTHON")
    config = EvalConfig(
        tasks=tasks,
        out=out,
        model=model,
        rounds=rounds,
        attempts=attempts,
        mode=mode,
        seed=seed,
        heldout_fraction=heldout,
        candidates=candidates,
        train_attempts=train_attempts,
        timeout_s=timeout_s,
        test_python=test_python,
        embedder=embedder or settings.embedder,
        starter_skills=starter_skills,
        max_requests=max_requests,
        max_train=max_train,
        max_heldout=max_heldout,
    )
    with clean_errors(), progress_bar() as progress:
        bars: dict[str, TaskID] = {}

        def report(label: str, done: int, total: int) -> None:
            if label not in bars:
                bars[label] = progress.add_task(label, total=total)
            progress.update(bars[label], completed=done, total=total)

        summary = run_eval(config, os.environ, report)
    if summary["harness_check"]:
        typer.echo(summary["note"])
    for rnd in summary["rounds"]:
        w, wo, p = rnd["heldout"]["skills"], rnd["heldout"]["no_skills"], rnd["paired"]
        typer.echo(
            f"round {rnd['round']}: held-out pass rate with skills {_rate(w)}, without {_rate(wo)}; "
            f"paired difference {p['difference']:+.3f} (McNemar p = {p['p_value']:.3f}); "
            f"skills in the bank: {rnd['skills_in_bank']}"
        )
    typer.echo(f"results: {out / 'results.json'}\nreport:  {out / 'report.html'}")


def _rate(stats: dict) -> str:  # type: ignore[type-arg]
    if stats["pass_rate"] is None:
        return "- (no valid attempts)"
    lo, hi = stats["ci95"]
    counts = f"{stats['resolved']}/{stats['valid']}, {stats['invalid']} invalid"
    return f"{stats['pass_rate']:.2f} [{lo:.2f}, {hi:.2f}] ({counts})"
