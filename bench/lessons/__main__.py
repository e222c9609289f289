"""Lesson benchmark (`python -m bench.lessons [--embedder minilm|hash] [--no-starter]`).

14 lesson classes, each met in 3 small repos (see `classes`). Two instances per class are recorded as real
sessions through the MCP server and distilled by the heuristic distiller; the third, unseen instance is looked up
through `search_skills` and `run_tests`' `suggested_skills` (see `evaluate`). Writes
docs/benchmarks/distill-lessons.md; exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import anyio

from bench.common import machine, write_report
from bench.lessons.classes import LESSONS
from bench.lessons.evaluate import Outcome, run

TARGETS = {
    "merge precision": 1.0,
    "merge recall": 0.9,
    "first rank (search_skills)": 0.9,
    "first rank (suggested)": 0.9,
}


def figures(out: Outcome) -> dict[str, float]:
    n = len(out.lessons)
    return {
        "merge precision": out.precision(),
        "merge recall": out.recall(),
        "first rank (search_skills)": sum(out.search_first.values()) / n,
        "first rank (suggested)": sum(out.suggest_first.values()) / n,
    }


def report(out: Outcome, embedder: str, starter: bool, seconds: float) -> str:
    got = figures(out)
    rows = "\n".join(
        f"| {name} | {got[name]:.3f} | >= {target:.2f} | {'pass' if got[name] >= target else 'MISS'} |"
        for name, target in TARGETS.items()
    )
    lessons = []
    for lesson in out.lessons:
        mine = [sid for sid in out.skills if lesson.name in out.lesson_of(sid)]
        rule = "; ".join(out.rules[sid] for sid in mine) or "-"
        searched, suggested = out.top.get(lesson.name, ([], []))
        beaten = {sid for sid in (searched[:1] + suggested[:1]) if sid not in mine}
        pattern = " / ".join(out.patterns[sid] for sid in mine) or "-"
        ok = ("yes" if out.search_first[lesson.name] else "no", "yes" if out.suggest_first[lesson.name] else "no")
        above = ", ".join(f"`{b}`" for b in sorted(beaten)) or ""
        cells = [lesson.name, lesson.category, str(len(mine)), f"`{pattern}`", f"`{rule}`", *ok, above]
        lessons.append("| " + " | ".join(cells) + " |")
    table = "\n".join(lessons)
    return f"""# Lesson benchmark (`python -m bench.lessons`)

{machine()}
{len(out.lessons)} lesson classes, each met in 3 small repos with different repo, file, function and variable names.
Two instances per class were recorded as real sessions through the in-memory MCP client (`run_tests` failing with
the real output of this interpreter, `apply_patch` with the real diff, `run_tests` passing, `record_trajectory`),
then distilled by the heuristic distiller; the third instance is unseen. Embedder: `{embedder}`; starter pack
{"loaded (44 hand-written skills compete in every ranking)" if starter else "not loaded"}. {out.summary}.
Wall time {seconds:.0f} s (machine shared with other work, figures of time are noisy).

| figure | value | target | |
| --- | --- | --- | --- |
{rows}

- merge precision: of the pairs of recorded trajectories that ended in one skill, the share from the same lesson;
- merge recall: the share of lessons whose two trajectories ended in exactly one skill;
- first rank: the share of unseen instances whose top `search_skills` hit (query: its failure message) or top
  `suggested_skills` entry (its own `run_tests`) is its lesson's skill.

| lesson | category | skills | pattern | rule | search first | suggested first | ranked above it |
| --- | --- | --- | --- | --- | --- | --- | --- |
{table}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lessons")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hash"])
    parser.add_argument("--no-starter", action="store_true")
    parser.add_argument("--out", default="distill-lessons", help="report name under docs/benchmarks/")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="skillbank-bench-lessons-") as tmp:
        out = anyio.run(lambda: run(LESSONS, Path(tmp), embedder=args.embedder, starter=not args.no_starter))
    text = report(out, args.embedder, not args.no_starter, time.perf_counter() - started)
    write_report(text, args.out)
    print(text)
    got = figures(out)
    return 0 if all(got[name] >= target for name, target in TARGETS.items()) else 1


if __name__ == "__main__":
    sys.exit(main())
