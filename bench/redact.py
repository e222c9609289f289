"""Secret redaction benchmark: `python -m bench.redact`.

Positives: secrets of 21 kinds, generated from a fixed seed in realistic formats (no real secret is stored in the
repository), each placed in every context of `bench/data/redaction/contexts.json` (env files, JSON and YAML config,
shell commands, Python, logs, HTTP headers, tracebacks, `.env` diffs, URL query strings, secrets glued to letters)
and of `MORE_CONTEXTS` (AWS keys beside their id, STS output, URL passwords with no user, mysql `-p`, INI `password
= value`, sshpass `-p`), and each sample again in the forms agents store it in: inside JSON text after `\n` or `\t`,
JSON of JSON, and URL-encoded. A sample counts as redacted when no 8-character piece of the secret (raw or in the
sample's encoding) is left. Negatives: `bench/data/redaction/clean.txt` (git SHAs, sha256 sums, UUIDs, npm integrity
strings, base64 test data, lockfile and log lines, identifiers, escaped test output, harmless `KEY=value` diff
lines), `MORE_CLEAN` (paths and URLs with random-looking parts, look-alikes of `MORE_CONTEXTS`) and the source lines
of installed packages (pydantic, anyio, httpx, starlette, click, rich); a false positive is a line with any
redaction.

Baselines, same run: the redactor as it was before the escape and inline-`KEY=value` rules (`BEFORE`, loaded
from git), and well-known provider prefixes only (what a prefix scanner finds). Throughput is measured on a big
diff (every source file of those packages as an added file, ~4 MB) and on the same diff stringified as JSON.
Results go to `docs/benchmarks/redact.md`; exit status 1 if a target is missed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import random
import subprocess
import sys
import time
import types
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.redact_samples import DATA, FORMS, GENERATORS, MORE_CLEAN, Sample, leaked, positives
from skills_store.redact import Redactor
from skills_store.redact_rules import PROVIDER_RULES

REPO_ROOT = Path(__file__).resolve().parents[1]
OUT = REPO_ROOT / "docs" / "benchmarks" / "redact.md"
CODE_PACKAGES = ("pydantic", "anyio", "httpx", "starlette", "click", "rich")
#: The last commit of `skills_store/redact.py` before secrets were looked for through escapes and inside lines.
BEFORE = "d0d6235"
RECALL_TARGET = 0.99
FP_LINE_TARGET = 0.001
FP_CLEAN_TARGET = 0.0


def code_lines() -> list[str]:
    lines: list[str] = []
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        for path in sorted(Path(spec.origin).parent.rglob("*.py")):
            if "test" in path.parts[-1] or "tests" in path.parts:
                continue
            lines += [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    return lines


def big_diff() -> str:
    """Every source file of CODE_PACKAGES as an added file of one unified diff (what a big patch looks like)."""
    parts = []
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        root = Path(spec.origin).parent
        for path in sorted(root.rglob("*.py")):
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            rel = f"{name}/{path.relative_to(root)}"
            head = f"diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n"
            head += f"@@ -0,0 +1,{len(lines)} @@\n"
            parts.append(head + "".join(f"+{line}\n" for line in lines))
    return "".join(parts)


def before_redactor() -> Any:
    """The redactor of commit BEFORE, loaded from git into its own module; None outside a git checkout."""
    try:
        source = subprocess.run(
            ["git", "show", f"{BEFORE}:skills_store/redact.py"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("bench_redact_before")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{BEFORE}:skills_store/redact.py", "exec"), module.__dict__)
    return module.Redactor()


def prefix_baseline() -> Redactor:
    """Provider-prefix rules only: what a scanner of well-known key formats finds."""
    return Redactor(entropy=False, rules=PROVIDER_RULES)


def throughput(redactor, text: str) -> float:
    start = time.perf_counter()
    redactor.redact_text(text)
    return len(text) / (time.perf_counter() - start) / 1e6


def evaluate(redactor, pos: list[Sample], clean: list[str], code: list[str]) -> dict:
    start = time.perf_counter()
    misses = [(k, f, t) for k, f, s, e, t in pos if leaked((s, e), t, redactor.redact_text(t))]
    clean_fp = [c for c in clean if "[REDACTED:" in redactor.redact_text(c)]
    code_fp = [c for c in code if "[REDACTED:" in redactor.redact_text(c)]
    elapsed = time.perf_counter() - start
    size = sum(len(t) for *_, t in pos) + sum(map(len, clean)) + sum(map(len, code))
    by_kind: dict[str, list[int]] = {}
    by_form: dict[str, list[int]] = {}
    for k, f, *_ in pos:
        by_kind.setdefault(k, [0, 0])[1] += 1
        by_form.setdefault(f, [0, 0])[1] += 1
    for k, f, _ in misses:
        by_kind[k][0] += 1
        by_form[f][0] += 1
    return {
        "recall": 1 - len(misses) / len(pos),
        "clean_fp": len(clean_fp) / len(clean),
        "code_fp": len(code_fp) / max(len(code), 1),
        "mb_s": size / elapsed / 1e6,
        "misses": misses,
        "clean_fp_lines": clean_fp,
        "code_fp_lines": code_fp,
        "by_kind": by_kind,
        "by_form": by_form,
    }


def main() -> None:
    rng = random.Random(20260701)
    pos = positives(rng)
    clean = [ln for ln in (DATA / "clean.txt").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    clean += MORE_CLEAN
    code = code_lines()
    before = before_redactor()
    runs: dict[str, Any] = {"skillbank `Redactor`": Redactor(), "prefix rules only": prefix_baseline()}
    if before is not None:
        runs = {"skillbank `Redactor`": runs["skillbank `Redactor`"], f"before ({BEFORE})": before, **runs}
    results = {name: evaluate(r, pos, clean, code) for name, r in runs.items()}
    diff = big_diff()
    stringified = json.dumps({"patch": diff})
    speed = {name: (throughput(r, diff), throughput(r, stringified)) for name, r in runs.items()}
    ours = results["skillbank `Redactor`"]
    checks = [
        ("recall", ours["recall"] >= RECALL_TARGET, f">= {RECALL_TARGET}"),
        ("false positives, clean samples", ours["clean_fp"] <= FP_CLEAN_TARGET, f"<= {FP_CLEAN_TARGET}"),
        ("false positives, code lines", ours["code_fp"] <= FP_LINE_TARGET, f"<= {FP_LINE_TARGET}"),
    ]
    write_report(results, speed, pos, clean, code, len(diff), checks)
    print(OUT.read_text())
    sys.exit(0 if all(ok for _, ok, _ in checks) else 1)


def _row(label: str, values: list[str]) -> str:
    return f"| {label} | " + " | ".join(values) + " |"


def write_report(results, speed, pos, clean, code, diff_size: int, checks) -> None:
    names = list(results)
    ours = results[names[0]]
    head = _row("measure", names) + "\n" + _row("---", ["---"] * len(names))
    table = "\n".join(
        [
            head,
            _row("recall (secret fully removed)", [f"{r['recall']:.4f}" for r in results.values()]),
            _row("false-positive rate, clean samples", [f"{r['clean_fp']:.4f}" for r in results.values()]),
            _row(
                "false-positive rate, code lines",
                [f"{r['code_fp']:.5f} ({len(r['code_fp_lines'])})" for r in results.values()],
            ),
            _row("throughput, corpus lines one by one", [f"{r['mb_s']:.2f} MB/s" for r in results.values()]),
            _row(f"throughput, one {diff_size / 1e6:.1f} MB diff", [f"{s[0]:.2f} MB/s" for s in speed.values()]),
            _row("throughput, that diff as JSON text", [f"{s[1]:.2f} MB/s" for s in speed.values()]),
        ]
    )
    ratios = ""
    if len(names) == 3:
        mine, old = speed[names[0]], speed[names[1]]
        ratios = (
            f"\nSpeed against `{names[1]}` in the same run: {mine[0] / old[0]:.2f}x on the diff, "
            f"{mine[1] / old[1]:.2f}x on the diff as JSON text.\n"
        )

    def per(key: str) -> str:
        keys = sorted(ours[key])
        lines = [_row(key.removeprefix("by_"), ["samples", *names]), _row("---", ["---"] * (len(names) + 1))]
        for k in keys:
            n = ours[key][k][1]
            lines.append(_row(k, [str(n), *(f"{(n - r[key][k][0]) / n:.3f}" for r in results.values())]))
        return "\n".join(lines)

    fps = "\n".join(f"- `{line.strip()[:140]}`" for line in ours["code_fp_lines"][:15] + ours["clean_fp_lines"][:10])
    misses = "\n".join(f"- {k}, {f}: `{t.strip()[:140]}`" for k, f, t in ours["misses"][:10]) or "- none"
    verdict = "\n".join(f"| {name} | {target} | {'pass' if ok else 'FAIL'} |" for name, ok, target in checks)
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        f"""# Secret redaction (`python -m bench.redact`)

Machine: {platform.machine()}, {os.cpu_count()} cores (load {load} when it ran), Python {platform.python_version()},
{platform.platform()}. Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.

Corpus: {len(pos)} samples: secrets of {len(GENERATORS)} kinds in the contexts of
`bench/data/redaction/contexts.json` and `MORE_CONTEXTS`, each in {len(FORMS)} forms
({"; ".join(f for f, _, _ in FORMS)}); generated from a fixed seed. Negatives:
{len(clean)} clean samples (`bench/data/redaction/clean.txt` and `MORE_CLEAN`: hashes, UUIDs, base64 test data,
lockfiles, logs, paths with random-looking parts, escaped test output, harmless `KEY=value` diff lines) and
{len(code):,} non-blank source lines of {", ".join(CODE_PACKAGES)}. Recall is by sample: a sample counts when no
8-character piece of its secret is left.

{table}
{ratios}
| target | threshold | result |
| --- | --- | --- |
{verdict}

## Recall by form

{per("by_form")}

## Recall by kind

{per("by_kind")}

## Misses (first 10)

{misses}

## False positives (first 25)

{fps or "- none"}
"""
    )


if __name__ == "__main__":
    main()
