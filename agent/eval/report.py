"""The eval's results: per round and condition, pass rate with a 95% Wilson interval, pass@K, tokens, cost and
time; the paired comparison of the two conditions; and a self-contained HTML page with an inline SVG plot.

Invalid attempts (grading timed out or showed no evidence; the solver crashed) are counted apart and left out of
the rate. A scripted model makes the whole report a harness check, and it says so at the top.
"""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path
from typing import Any

from agent.eval.records import AttemptLog, AttemptRecord
from agent.eval.scripted import is_scripted
from agent.eval.stats import paired, wilson

HARNESS_CHECK = (
    "Harness check: the model is scripted (it answers from the task folders), so these numbers test the eval "
    "machinery and say nothing about learning."
)


def condition_stats(records: list[AttemptRecord]) -> dict[str, Any]:
    valid = [r for r in records if r.valid]
    resolved = sum(r.resolved for r in valid)
    low, high = wilson(resolved, len(valid))
    by_task: dict[str, bool] = defaultdict(bool)
    for r in valid:
        by_task[r.task_id] |= r.resolved
    costs = [r.cost_usd for r in records if r.cost_usd is not None]
    return {
        "attempts": len(records),
        "valid": len(valid),
        "invalid": len(records) - len(valid),
        "resolved": resolved,
        "pass_rate": resolved / len(valid) if valid else None,
        "ci95": [round(low, 4), round(high, 4)],
        "tasks": len(by_task),
        "pass_at_k": sum(by_task.values()) / len(by_task) if by_task else None,
        "input_tokens": sum(r.input_tokens for r in records),
        "output_tokens": sum(r.output_tokens for r in records),
        "requests": sum(r.requests for r in records),
        "cost_usd": round(sum(costs), 6) if costs else None,
        "cost_known_for": len(costs),
        "wall_s": round(sum(r.wall_s for r in records), 2),
    }


def summarize(
    log: AttemptLog, split: dict[str, Any], train: list[str], heldout: list[str], config: Any, rounds: dict[str, Any]
) -> dict[str, Any]:
    out_rounds = []
    # Only the attempts this run asked for: a rerun in the same --out with fewer tasks or attempts keeps the log's
    # other lines (a later, larger run reuses them) but must not count them under a header that names fewer.
    train_ids, heldout_ids = set(train), set(heldout)

    def asked(records: list[AttemptRecord], tasks: set[str], attempts: int) -> list[AttemptRecord]:
        return [x for x in records if x.task_id in tasks and x.attempt < attempts]

    for r in range(1, config.rounds + 1):
        with_skills = asked(log.select(round_=r, phase="heldout", condition="skills"), heldout_ids, config.attempts)
        without = asked(log.select(round_=r, phase="heldout", condition="no_skills"), heldout_ids, config.attempts)
        comparison = paired(
            {x.pair_key: x.resolved for x in with_skills if x.valid},
            {x.pair_key: x.resolved for x in without if x.valid},
        )
        out_rounds.append(
            {
                "round": r,
                "skills_in_bank": rounds.get(str(r), {}).get("skills"),
                "skills_added": rounds.get(str(r), {}).get("added"),
                "train": condition_stats(
                    asked(log.select(round_=r, phase="train", condition="skills"), train_ids, config.train_attempts)
                ),
                "heldout": {"skills": condition_stats(with_skills), "no_skills": condition_stats(without)},
                "paired": comparison.model_dump() | {"difference": comparison.difference},
            }
        )
    scripted = is_scripted(config.model)
    return {
        "model": config.model,
        "mode": config.mode,
        "harness_check": scripted,
        "note": HARNESS_CHECK if scripted else None,
        "seed": config.seed,
        "attempts": config.attempts,
        "candidates": config.candidates if config.mode == "oneshot" else None,
        "train_tasks": len(train),
        "heldout_tasks": len(heldout),
        "split": split,
        "rounds": out_rounds,
    }


def _plot(summary: dict[str, Any]) -> str:
    """An inline SVG: held-out pass rate per round with 95% intervals, with skills vs without."""
    w, h, left, right, top, bottom = 640, 300, 50, 20, 20, 40
    rounds = summary["rounds"]
    n = max(1, len(rounds))

    def x(i: int) -> float:
        return left + (w - left - right) * (0.5 if n == 1 else i / (n - 1))

    def y(v: float) -> float:
        return top + (h - top - bottom) * (1 - v)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" '
             'aria-label="held-out pass rate per round">']  # fmt: skip
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{left}" x2="{w - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" font-size="11" text-anchor="end">{tick:.2f}</text>')
    for i, rnd in enumerate(rounds):
        label = f"round {rnd['round']}"
        parts.append(f'<text x="{x(i):.1f}" y="{h - 18}" font-size="11" text-anchor="middle">{label}</text>')
    for cond, colour, dx in (("skills", "#1f77b4", -4), ("no_skills", "#d62728", 4)):
        points = []
        for i, rnd in enumerate(rounds):
            stats = rnd["heldout"][cond]
            if stats["pass_rate"] is None:
                continue
            cx, cy = x(i) + dx, y(stats["pass_rate"])
            lo, hi = stats["ci95"]
            parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}" stroke="{colour}"/>')
            parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{colour}"/>')
            points.append(f"{cx:.1f},{cy:.1f}")
        if len(points) > 1:
            parts.append(f'<polyline points="{" ".join(points)}" fill="none" stroke="{colour}" stroke-width="2"/>')
    parts.append(f'<text x="{left + 10}" y="{h - 4}" font-size="12" fill="#1f77b4">&#9679; with skills</text>')
    parts.append(f'<text x="{left + 130}" y="{h - 4}" font-size="12" fill="#d62728">&#9679; without skills</text>')
    parts.append("</svg>")
    return "".join(parts)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return html.escape(str(value))


def write_html(summary: dict[str, Any], path: Path) -> None:
    rows = []
    for rnd in summary["rounds"]:
        for label, stats in (("train (with skills)", rnd["train"]), ("held-out with skills", rnd["heldout"]["skills"]),
                             ("held-out without skills", rnd["heldout"]["no_skills"])):  # fmt: skip
            ci = f"[{stats['ci95'][0]:.2f}, {stats['ci95'][1]:.2f}]"
            cells = [rnd["round"], label, stats["resolved"], stats["valid"], stats["invalid"], stats["pass_rate"], ci,
                     stats["pass_at_k"], stats["input_tokens"] + stats["output_tokens"], stats["cost_usd"],
                     stats["wall_s"]]  # fmt: skip
            rows.append("<tr>" + "".join(f"<td>{_fmt(c)}</td>" for c in cells) + "</tr>")
        p = rnd["paired"]
        rows.append(
            f'<tr class="paired"><td>{rnd["round"]}</td><td colspan="10">paired on {p["pairs"]} (task, attempt) '
            f"pairs: both {p['both']}, only with skills {p['only_with']}, only without {p['only_without']}, "
            f"neither {p['neither']}; difference {p['difference']:+.3f}, exact McNemar p = {p['p_value']:.3f}; "
            f"skills in the bank after training: {_fmt(rnd['skills_in_bank'])}</td></tr>"
        )
    banner = f'<p class="banner">{html.escape(summary["note"])}</p>' if summary["harness_check"] else ""
    header = ("<tr><th>round</th><th>condition</th><th>resolved</th><th>valid</th><th>invalid</th><th>pass rate</th>"
              "<th>95% CI</th><th>pass@K</th><th>tokens</th><th>cost (USD)</th><th>wall s</th></tr>")  # fmt: skip
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>skillbank eval: {html.escape(summary["model"])}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:1000px}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;font-size:13px}}.banner{{background:#fff3cd;border:1px solid #e0c060;
padding:8px}}.paired td{{background:#f6f6f6}}</style></head><body>
<h1>skillbank eval</h1>{banner}
<p>model <code>{html.escape(summary["model"])}</code>, mode {summary["mode"]}, {summary["train_tasks"]} training and
{summary["heldout_tasks"]} held-out tasks (split seed {summary["seed"]}), {summary["attempts"]} attempt(s) per
held-out task and condition.</p>
<h2>Held-out pass rate per round</h2>{_plot(summary)}
<h2>Numbers</h2><table>{header}{"".join(rows)}</table>
</body></html>
"""
    path.write_text(page, encoding="utf-8")
