"""What a `synthesize` run made and dropped: the tasks written or found, the verdict of every verified mutant, the
tests dropped from a task by the graded check, the error classes covered; as `skillbank tasks synth` prints it and
as JSON."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.tasks.verify import Baseline


@dataclass
class SynthReport:
    project: str
    tasks: list[Path] = field(default_factory=list)
    """Task folders this run wrote."""
    existing: list[Path] = field(default_factory=list)
    """Tasks found that `out` already held, identical (gold patch and graded tests): counted, left as they were."""
    name_taken: list[Path] = field(default_factory=list)
    """Tasks found whose folder name `out` already holds with a different task: not written, left as they were."""
    candidates: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    """Per verified mutant: killed (kept), equivalent (same flipped tests as a kept one), survived, no_collect,
    timeout, gold_unresolved (its gold tree, graded as the grader grades it, does not resolve), broken_resolved (no
    fail_to_pass test fails on its broken tree graded that way), already_in_out, name_taken."""
    baseline: Baseline | None = None
    bank_classes: Counter[str] = field(default_factory=Counter)
    task_classes: Counter[str] = field(default_factory=Counter)
    """Exception types in the failing output of the new tasks."""
    bug_classes: Counter[str] = field(default_factory=Counter)
    dropped_pass_to_pass: dict[str, list[str]] = field(default_factory=dict)
    """Per written task (by id): the pass_to_pass tests dropped because they do not pass in the graded run of the
    gold tree (they pass in the whole suite, not as the listed ids: order- or run-shape-dependent)."""
    dropped_fail_to_pass: dict[str, list[str]] = field(default_factory=dict)
    """Per written task (by id): the fail_to_pass tests dropped because they pass in the graded run of the broken
    tree (they failed in the whole suite only)."""
    statement_tokens: int = 0
    unreal: int = 0
    """Candidates skipped unverified: they do not compile, or mean the same as the original or an earlier one."""
    wall_s: float = 0.0
    runner: asyncio.Runner | None = field(default=None, repr=False)
    """The event loop model requests run on, open while synthesis runs."""

    @property
    def made(self) -> int:
        """Tasks of this source now in `out`: written by this run or found there identical."""
        return len(self.tasks) + len(self.existing)

    @property
    def covered_bank_classes(self) -> list[str]:
        return sorted(set(self.bank_classes) & set(self.task_classes))

    def summary(self) -> str:
        tried = sum(self.verdicts.values())
        lines = [
            f"{len(self.tasks)} task(s) from {self.project} in {self.wall_s:.1f} s: {self.candidates} candidate "
            f"mutants, {tried} verified ({', '.join(f'{k} {v}' for k, v in sorted(self.verdicts.items()))}), "
            f"{self.unreal} skipped as not compiling or equivalent",
            *(
                [f"{len(self.existing)} already in the output dir (identical), left as they were"]
                if self.existing
                else []
            ),
            *(
                [
                    f"{len(self.name_taken)} not written: a different task of that name is in the output dir "
                    f"({', '.join(p.name for p in self.name_taken)})"
                ]
                if self.name_taken
                else []
            ),
            *([self._dropped_line()] if self._dropped_any() else []),
            "bug classes: " + (", ".join(f"{k} {v}" for k, v in sorted(self.bug_classes.items())) or "none"),
            "error classes in the new tasks: "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.task_classes.items())) or "none"),
        ]
        if self.bank_classes:
            covered = self.covered_bank_classes
            lines.append(
                f"skill bank error classes covered: {len(covered)} of {len(self.bank_classes)}"
                + (f" ({', '.join(covered)})" if covered else "")
            )
        else:
            lines.append("skill bank: no skills, so operators were weighted equally")
        return "\n".join(lines)

    def _dropped_any(self) -> bool:
        return bool(
            self.dropped_pass_to_pass
            or self.dropped_fail_to_pass
            or self.verdicts["gold_unresolved"]
            or self.verdicts["broken_resolved"]
        )

    def _dropped_line(self) -> str:
        parts = []
        for kind, per_task, tree in (
            ("pass_to_pass", self.dropped_pass_to_pass, "fail on the gold tree"),
            ("fail_to_pass", self.dropped_fail_to_pass, "pass on the broken tree"),
        ):
            tests = sorted({t for ids in per_task.values() for t in ids})
            dropped = sum(len(ids) for ids in per_task.values())
            shown = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
            if dropped:
                parts.append(f"{dropped} {kind} test(s) that {tree} dropped from {len(per_task)} task(s) ({shown})")
        if self.verdicts["gold_unresolved"]:
            parts.append(f"{self.verdicts['gold_unresolved']} task(s) not written, as their gold tree fails there")
        if self.verdicts["broken_resolved"]:
            parts.append(
                f"{self.verdicts['broken_resolved']} task(s) not written, as their broken tree passes there "
                "(doing nothing would resolve them)"
            )
        return "graded check of the task trees (the listed tests, run as the grader runs them): " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        baseline = self.baseline
        return {
            "project": self.project,
            "tasks": [p.name for p in self.tasks],
            "existing": [p.name for p in self.existing],
            "name_taken": [p.name for p in self.name_taken],
            "candidates": self.candidates,
            "verdicts": dict(self.verdicts),
            "skipped_unreal": self.unreal,
            "bug_classes": dict(self.bug_classes),
            "dropped_pass_to_pass": self.dropped_pass_to_pass,
            "dropped_fail_to_pass": self.dropped_fail_to_pass,
            "task_error_classes": dict(self.task_classes),
            "bank_error_classes": dict(self.bank_classes),
            "covered_bank_classes": self.covered_bank_classes,
            "baseline": None
            if baseline is None
            else {"passing": len(baseline.passing), "failing": baseline.failing, "duration_s": baseline.duration_s},
            "statement_tokens": self.statement_tokens,
            "wall_s": round(self.wall_s, 2),
        }
