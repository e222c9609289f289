"""Does the skill bank help a real model? One-shot eval, with vs without skills, on >= 40 held-out tasks.

    python -m bench.learning --model local:qwen2.5-coder-1.5b        (the local extra)
    python -m bench.learning --model scripted:skills                  (offline harness check)

The task set (cached in `.bench-cache/learning/tasks`) is every bundled project synthesized further than the
shipped suite (`--per-project` tasks each; the shipped tasks come first, same seed) plus `--pypi` releases. The
held-out share is chosen so at least `--min-heldout` tasks are held out. One round: the training tasks are solved
with skills and distilled, then each held-out task is solved with and without skills (`--candidates` samples each,
the best by reward). Numbers are reported whatever they are, in `docs/benchmarks/learning.md`; a scripted model's
report says it is a harness check.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from bench.common import ROOT, machine, write_report

CACHE = ROOT / ".bench-cache" / "learning"
PROJECTS = ROOT / "agent" / "tasks" / "suite" / "projects"


def build_tasks(per_project: int, pypi: list[str], pypi_n: int) -> Path:
    from agent.tasks.pypi import fetch_sdist, parse_spec
    from agent.tasks.synth import SynthConfig, synthesize

    tasks = CACHE / "tasks"
    for project in sorted(p for p in PROJECTS.iterdir() if p.is_dir()):
        marker = CACHE / f"{project.name}-{per_project}.done"
        if not marker.exists():
            config = SynthConfig(n=per_project, seed=0, workers=2, test_python=sys.executable)
            report = synthesize(project, tasks, config, project=project.name, source=f"repo:{project.name}")
            print(report.summary(), file=sys.stderr)
            marker.touch()
    for spec in pypi:
        name, version = parse_spec(spec)
        marker = CACHE / f"{name}-{version}-{pypi_n}.done"
        if not marker.exists():
            root = fetch_sdist(spec, CACHE / "sdists" / f"{name}-{version}")
            report = synthesize(root, tasks, SynthConfig(n=pypi_n, seed=0, workers=2, test_python=sys.executable),
                                project=name, source=f"pypi:{spec}")  # fmt: skip
            print(report.summary(), file=sys.stderr)
            marker.touch()
    return tasks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--per-project", type=int, default=15)
    parser.add_argument("--pypi", action="append", default=[], help="NAME==VERSION to synthesize tasks from")
    parser.add_argument("--pypi-n", type=int, default=10)
    parser.add_argument("--min-heldout", type=int, default=40)
    parser.add_argument("--candidates", type=int, default=1)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--max-output-tokens", type=int, default=512)
    parser.add_argument("--max-train", type=int, default=None, help="Solve at most this many training tasks")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--report-only", action="store_true", help="Report what the output dir holds so far")
    parser.add_argument("--note", default="", help="A paragraph added to the report (e.g. why a run is partial)")
    args = parser.parse_args()

    from agent.eval.harness import EvalConfig, run_eval, summary_of
    from agent.tasks.model import load_tasks

    started = time.monotonic()
    tasks_dir = build_tasks(args.per_project, args.pypi, args.pypi_n)
    count = len(load_tasks(tasks_dir))
    fraction = min(0.9, max(0.5, (args.min_heldout + 0.5) / count))
    out = args.out or CACHE / f"eval-{args.model.replace(':', '-')}-n{args.candidates}"
    config = EvalConfig(tasks=tasks_dir, out=out, model=args.model, rounds=1, attempts=1, mode="oneshot",
                        heldout_fraction=fraction, candidates=args.candidates, test_python=sys.executable,
                        embedder=args.embedder, timeout_s=300, max_train=args.max_train,
                        max_output_tokens=args.max_output_tokens)  # fmt: skip

    def progress(label: str, done: int, total: int) -> None:
        print(f"\r{label}: {done}/{total} ({time.monotonic() - started:.0f} s)", end="", file=sys.stderr, flush=True)

    if args.report_only:
        summary = summary_of(config)
        summary["partial"] = True
        rnd = summary["rounds"][0]
        started -= rnd["train"]["wall_s"] + sum(s["wall_s"] for s in rnd["heldout"].values())
    else:
        summary = run_eval(config, os.environ, progress)
        print(file=sys.stderr)
    text = report(summary, count, time.monotonic() - started)
    write_report(text + (f"\n{args.note}\n" if args.note else ""), "learning")
    return 0


def report(summary: dict, tasks: int, wall_s: float) -> str:  # type: ignore[type-arg]
    rnd = summary["rounds"][0]
    w, wo, p, tr = rnd["heldout"]["skills"], rnd["heldout"]["no_skills"], rnd["paired"], rnd["train"]

    def rate(s: dict) -> str:  # type: ignore[type-arg]
        if s["pass_rate"] is None:
            return "-"
        return f"{s['pass_rate']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}] ({s['resolved']}/{s['valid']})"

    lines = [
        "# Learning: held-out pass rate with vs without skills\n",
        machine(),
        f"`python -m bench.learning --model {summary['model']}`: one-shot mode, {summary['candidates']} candidate(s) "
        f"per attempt, {tasks} tasks ({summary['train_tasks']} training, {summary['heldout_tasks']} held out), "
        f"one round, {wall_s / 60:.1f} min of attempts on a machine shared with other agents' runs.\n",
    ]
    if summary["harness_check"]:
        lines.append(f"**{summary['note']}**\n")
    if summary.get("partial"):
        lines.append("**Partial: the run was stopped before it finished; these are the attempts it completed.**\n")

    def row(label: str, s: dict) -> str:  # type: ignore[type-arg]
        return f"| {label} | {rate(s)} | {s['invalid']} | {s['input_tokens']:,} / {s['output_tokens']:,} |"

    lines += [
        "| | pass rate [95% Wilson] | invalid | tokens in / out |",
        "| --- | --- | --- | --- |",
        row("training (with skills)", tr),
        row("held-out, with skills", w),
        row("held-out, without skills", wo),
        "",
        f"Skills in the bank after training: {rnd['skills_in_bank']}. Paired on {p['pairs']} held-out tasks: both "
        f"{p['both']}, only with skills {p['only_with']}, only without {p['only_without']}, neither {p['neither']}; "
        f"difference {p['difference']:+.3f}, exact McNemar p = {p['p_value']:.3f}.\n",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
