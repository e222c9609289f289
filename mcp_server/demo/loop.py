"""The steps of `skillbank demo`: the evolve loop end to end, offline, on the bundled sample repository.

Nothing here reimplements the loop; each step drives the engine the real commands use, so the demo fails when
they do:

1. `agent.tasks.synth.synthesize` (`skillbank tasks synth`) mutates the sample repo into verified task folders.
2-4. `agent.eval.harness.run_eval` (`skillbank eval --mode agentic`) with `scripted:gold`: the bundled agent
   (`agent.run.solve`) solves the training tasks through a real skillbank server spawned over stdio, whose data
   dir records the trajectories; the heuristic distiller turns them into skills; the held-out tasks are solved
   with and without skills and the report is written as JSON and HTML.

The scripted model applies each task's gold patch, so the numbers check the machinery, never learning.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from skills_store.models import utcnow

SAMPLE = Path(__file__).with_name("sample_repo")
MODEL = "scripted:gold"
HARNESS_LABEL = "harness check with a scripted model, not a learning result"


class DemoError(Exception):
    """A step of the demo did not produce what the next one needs."""


class DemoArgumentError(DemoError):
    """The demo was given an `--out` or `--home` it cannot use; nothing was run."""


@dataclass
class DemoResult:
    out: Path
    home: Path
    tasks: list[Path] = field(default_factory=list)
    trajectories: int = 0
    skills: list[Any] = field(default_factory=list)
    results: Path | None = None
    html: Path | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


class Steps:
    """Step headers with the time each step took."""

    def __init__(self, console: Console) -> None:
        self.out = console
        self.started = time.monotonic()
        self.current: tuple[str, float] | None = None
        self.timings: dict[str, float] = {}

    def begin(self, title: str) -> None:
        self.end()
        self.out.print(f"\n[bold]{title}[/]")
        self.current = (title, time.monotonic())

    def end(self) -> None:
        if self.current is not None:
            title, began = self.current
            self.timings[title] = took = time.monotonic() - began
            self.out.print(f"  [dim]({took:.1f} s)[/]")
            self.current = None

    def line(self, text: str) -> None:
        self.out.print(f"  {text}", markup=False, highlight=False)

    @property
    def total(self) -> float:
        return time.monotonic() - self.started


def synthesize_tasks(steps: Steps, tasks_dir: Path, *, n: int, seed: int, test_python: str) -> list[Path]:
    from agent.tasks.synth import SynthConfig, synthesize

    report = synthesize(SAMPLE, tasks_dir, SynthConfig(n=n, seed=seed, workers=2, test_python=test_python),
                        project="inventory", source="skillbank demo: bundled sample repo")  # fmt: skip
    for line in report.summary().splitlines():
        steps.line(line)
    for path in report.tasks:
        task = json.loads((path / "task.json").read_text(encoding="utf-8"))
        steps.line(f"  {path.name}: {len(task['fail_to_pass'])} failing, {len(task['pass_to_pass'])} passing tests")
    if len(report.tasks) < 2:
        raise DemoError(f"only {len(report.tasks)} task(s) synthesized; the loop needs a training and a held-out one")
    return report.tasks


class Progress:
    """The harness's progress callback: one line per finished attempt, and when training (hence distillation)
    ended, so the training, distillation and held-out steps get their own times."""

    def __init__(self, steps: Steps, on_trained: Callable[[], None], on_heldout: Callable[[], None]) -> None:
        self.steps = steps
        self.on_trained = on_trained
        self.on_heldout = on_heldout
        self.label = ""
        self.shown = -1

    def __call__(self, label: str, done: int, total: int) -> None:
        if label != self.label:
            if "held-out" in label:
                self.on_heldout()
            self.label, self.shown = label, -1
        if done != self.shown and done > 0:
            self.steps.line(f"{label}: {done}/{total} attempts")
            if done == total and "training" in label:
                self.on_trained()  # the harness distills next
        self.shown = done


def read_trajectories(home: Path, since: datetime) -> list[Any]:
    """The trajectories this run recorded: those created since `since` (a `--home` may hold older ones, the user's
    own sessions among them)."""
    from skills_store.trajectories.store import SQLiteTrajectoryStore

    if not (home / "trajectories.db").is_file():
        return []
    with SQLiteTrajectoryStore(home / "trajectories.db") as store:
        return store.list(since=since, limit=1000)


def read_skills(home: Path, since: datetime) -> list[Any]:
    """The skills distilled from the trajectories this run recorded (a `--home` may hold older skills, and older
    trajectories they came from)."""
    from skills_store.catalog import Catalog

    path = home / "catalog.db"
    if not path.is_file():
        return []
    ours = {t.trajectory_id for t in read_trajectories(home, since)}
    with Catalog(path, readonly=True) as catalog:
        return [s for s in catalog.get(catalog.iter_ids()) if ours & set(s.sources)]


def show_trajectories(steps: Steps, trajectories: list[Any]) -> None:
    steps.line(f"{len(trajectories)} trajectories recorded by the server:")
    for traj in sorted(trajectories, key=lambda t: t.created_at):
        task = (traj.task or "").splitlines()[0][:70]
        steps.line(f"  {traj.trajectory_id} {traj.status}/{traj.outcome} from {traj.source}: {task}")


def show_skills(steps: Steps, skills: list[Any]) -> None:
    steps.line(f"lessons learned: {len(skills)} skill(s) from the training trajectories")
    for skill in skills:
        steps.line(f"  [{skill.skill_id}] {skill.title}")
        steps.line(f"      when you see: {_oneline(skill.pattern, 160)}")
        steps.line(f"      do: {_oneline(skill.strategy, 240)}")
        steps.line(f"      confidence {skill.confidence:.2f}, from {', '.join(skill.sources[:3])}")


def _oneline(text: str, limit: int) -> str:
    flat = " / ".join(line.strip() for line in text.splitlines() if line.strip())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def summary_paragraph(summary: dict[str, Any], attempts_path: Path) -> str:
    rnd = summary["rounds"][0]
    with_, without = rnd["heldout"]["skills"], rnd["heldout"]["no_skills"]
    shown = 0
    for line in attempts_path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["phase"] == "heldout" and record["condition"] == "skills" and record.get("skills_shown"):
            shown += 1
    return (
        f"This is a {HARNESS_LABEL}: {MODEL} applies each task's gold patch, so it says nothing about whether "
        f"skills help. It checks that the loop closes: {rnd['train']['resolved']}/{rnd['train']['attempts']} training "
        f"tasks resolved through the MCP server, {rnd['skills_in_bank']} skill(s) in the bank after distillation, "
        f"{shown}/{with_['attempts']} held-out attempts with skills were shown learned skills, and the held-out pass "
        f"rate was {with_['resolved']}/{with_['valid']} with skills and {without['resolved']}/{without['valid']} "
        f"without (paired difference {rnd['paired']['difference']:+.2f}). Run `skillbank eval --model MODEL` with a "
        "real model for a learning result."
    )


def run_eval_steps(
    steps: Steps,
    tasks_dir: Path,
    eval_dir: Path,
    *,
    seed: int,
    embedder: str,
    test_python: str,
    env: dict[str, str],
    since: datetime,
) -> dict[str, Any]:
    """Steps 2-4 through the eval harness; returns its summary."""
    from agent.eval.harness import EvalConfig, run_eval

    home = eval_dir / "home"
    config = EvalConfig(tasks=tasks_dir, out=eval_dir, model=MODEL, mode="agentic", seed=seed, embedder=embedder,
                        test_python=test_python, timeout_s=120, max_requests=10)  # fmt: skip
    steps.begin("Step 2/5: a scripted agent solves the training tasks through the real MCP server (stdio)")
    steps.line(f"bundled agent (agent.run.solve) with {MODEL}; server: skillbank serve, SKILLBANK_HOME={home}")

    def trained() -> None:
        show_trajectories(steps, read_trajectories(home, since))
        steps.begin("Step 3/5: distillation: trajectories -> skills (heuristic distiller)")

    def heldout_begins() -> None:
        # Distillation is over: show what it learned before the held-out attempts start.
        show_skills(steps, read_skills(home, since))
        steps.begin("Step 4/5: held-out tasks with vs without skills (eval report)")

    return run_eval(config, env, Progress(steps, trained, heldout_begins))


def run_loop(steps: Steps, out: Path, home: Path | None, *, n: int, seed: int, embedder: str) -> DemoResult:
    import os

    test_python = os.environ.get("SKILLBANK_TEST_PYTHON") or sys.executable
    eval_dir = out / "eval"
    eval_dir.mkdir(parents=True, exist_ok=True)
    data = eval_dir / "home"
    if home is not None:  # the eval keeps its data dir at <out>/home: point it at the one asked for
        home.mkdir(parents=True, exist_ok=True)
        data.symlink_to(home.resolve(), target_is_directory=True)
    result = DemoResult(out=out, home=home or data)

    steps.begin(f"Step 1/5: synthesize verified tasks from the bundled sample repo ({SAMPLE.name})")
    result.tasks = synthesize_tasks(steps, out / "tasks", n=n, seed=seed, test_python=test_python)
    env = {k: v for k, v in os.environ.items() if k != "SKILLBANK_HOME"}
    since = utcnow()  # what a `--home` held before is not this run's
    result.summary = run_eval_steps(steps, out / "tasks", eval_dir, seed=seed, embedder=embedder,
                                    test_python=test_python, env=env, since=since)  # fmt: skip
    rnd = result.summary["rounds"][0]
    result.results, result.html = eval_dir / "results.json", eval_dir / "report.html"
    result.trajectories = len(read_trajectories(data, since))
    result.skills = read_skills(data, since)
    if rnd["train"]["resolved"] < 1:
        raise DemoError(f"the agent resolved none of the {rnd['train']['attempts']} training tasks; see {eval_dir}")
    if not result.skills:
        raise DemoError(f"distillation learned no skill from the training trajectories; see {data}")
    steps.line(f"results: {result.results}")
    steps.line(f"report:  {result.html}")
    steps.out.print(f"\n  {summary_paragraph(result.summary, eval_dir / 'attempts.jsonl')}", markup=False)
    return result
