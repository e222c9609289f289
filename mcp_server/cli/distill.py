"""`skillbank distill [--llm MODEL]`: turn new closed trajectories into skills, with a progress bar.

First the outcomes of closed trajectories move the confidence of the skills they were shown; then the heuristic
distiller (or, with `--llm`, the LLM distiller within `--budget` tokens) runs over every closed trajectory it has
not processed yet, and the drafts are merged into the bank.

With `--llm`, the model tokens reported are the usage the model sent back (a request that failed costs its estimate
against the budget but is not reported as spent). Exit status, as `agent` has it: 2 when no request reached the
model (an endpoint that cannot be reached is one line naming the variable to set), 1 when a failing model request
(an error, an answer without the structured output) ended the pass, whatever was distilled before it stays
distilled and the rest pending; a pass that the token budget ends early exits 0.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Annotated

import typer

from mcp_server.cli.common import clean_errors, fail, load_settings, open_bank_cli, progress_bar, unreachable_hint

if TYPE_CHECKING:
    from mcp_server.cli.metered import MeteredModel
    from skills_store.distill.llm import LLMDistiller


def distill(
    llm: Annotated[
        str | None,
        typer.Option(
            "--llm", help="Model for the LLM distiller: openai:MODEL, anthropic:MODEL, or a gateway model name."
        ),
    ] = None,
    budget: Annotated[int, typer.Option(min=1, help="Most model tokens this run may spend (with --llm).")] = 200_000,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Trajectories read per batch.")] = 50,
    limit: Annotated[int | None, typer.Option(min=1, help="Distill at most this many trajectories.")] = None,
    llm_merge: Annotated[bool, typer.Option(help="Let the model write the text of merged duplicates (--llm).")] = False,
) -> None:
    """Distill new closed trajectories into skills (heuristic distiller unless --llm is given)."""
    from skills_store.distill.heuristic import HeuristicDistiller
    from skills_store.distill.outcomes import apply_outcomes
    from skills_store.distill.runner import BatchDistiller, distill_pending
    from skills_store.trajectories.store import SQLiteTrajectoryStore

    settings = load_settings()
    path = settings.home / "trajectories.db"
    if llm_merge and llm is None:
        fail("--llm-merge needs a model: pass --llm MODEL too")
    if not path.is_file():  # nothing recorded yet is not an error, and creates no skill bank either
        typer.echo(f"nothing to distill: no trajectories under {settings.home} yet (`skillbank serve` records them)")
        return
    with clean_errors():
        distiller: BatchDistiller = HeuristicDistiller()
        merger = None
        model: MeteredModel | None = None
        model_distiller: LLMDistiller | None = None
        if llm is not None:
            from agent.llm import resolve_model
            from mcp_server.cli.metered import MeteredModel
            from skills_store.distill.llm import LLMDistiller, LLMDistillerConfig

            model = MeteredModel(resolve_model(llm, os.environ))
            model_distiller = LLMDistiller(model, LLMDistillerConfig(token_budget=budget))
            merger = model_distiller.merge_texts if llm_merge else None
            distiller = model_distiller
        with SQLiteTrajectoryStore(path) as store, open_bank_cli(settings) as bank:
            outcomes = apply_outcomes(store, bank)
            with progress_bar() as progress:
                task = progress.add_task(f"distilling ({'llm: ' + llm if llm else 'heuristic'})", total=limit)
                report = distill_pending(
                    store,
                    bank,
                    distiller,
                    batch=batch,
                    limit=limit,
                    merger=merger,
                    progress=lambda n: progress.advance(task, n),
                    review=bool(settings.review),
                )
                progress.update(task, total=progress.tasks[task].completed)
    if model is not None:
        report = dataclasses.replace(report, tokens=model.tokens)
    typer.echo(
        f"outcomes: {outcomes.trajectories} closed trajectories counted, {outcomes.skills} skill(s) moved\n"
        + report.summary()
        + (f" (budget {budget:,})" if llm is not None else "")
    )
    if llm is not None and model is not None and model_distiller is not None and report.stopped:
        _exit_if_the_model_failed(llm, model, answered=model_distiller.requests, stopped=report.stopped)


def _exit_if_the_model_failed(spec: str, model: MeteredModel, *, answered: int, stopped: str) -> None:
    """When a failing model request ended the pass (more requests sent than answers used): exit 2 when no request
    ever reached the model, else 1. A pass the budget ended sent no request it did not use."""
    if model.sent <= answered:
        return
    hint = unreachable_hint(model.error, spec) if not answered else None
    if hint:
        fail(hint)
    fail(
        f"a request to the model {spec!r} failed and ended the pass (the trajectories left stay pending): {stopped}", 1
    )
