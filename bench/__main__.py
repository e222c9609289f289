"""`python -m bench` (`make bench`): run every benchmark, each in its own process, and report which failed.

Afterwards `docs/benchmarks.md` is assembled from the reports in `docs/benchmarks/` (`python -m bench --collect`
only assembles).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

REPORTS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"
BENCHMARKS = [
    "retrieval", "relevance", "search", "search_stdio", "embedder_worker", "embedder_runtime", "startup", "patch",
    "patch_mcp", "run_tests", "redact", "ingest", "hooks", "distill", "lessons",
]  # fmt: skip
#: Benchmarks whose reports have other names than the benchmark's.
REPORT_NAMES = {"lessons": ["distill-lessons", "distill-lessons-no-starter"]}
#: Reports collected but not run by `make bench`: `python -m bench.learning` runs a local model for hours.
COLLECT_ONLY = ["learning"]


def collect() -> Path:
    """Write docs/benchmarks.md: every report of docs/benchmarks/, in the order of BENCHMARKS, then COLLECT_ONLY."""
    parts = [
        "# Benchmarks\n",
        "Every benchmark measures against a named baseline in the same run, on this project's machine (2 cores).",
        "`make bench` runs them all and rewrites this page from the reports in `docs/benchmarks/`.\n",
    ]
    names = [report for name in BENCHMARKS + COLLECT_ONLY for report in REPORT_NAMES.get(name, [name])]
    for name in names:
        report = REPORTS / f"{name}.md"
        if report.is_file():
            body = report.read_text(encoding="utf-8").strip()
            body = re.sub(r"^(#+) ", r"#\1 ", body, flags=re.MULTILINE)
            parts.append(_relink(body, REPORTS.name) + "\n")
    out = REPORTS.parent / "benchmarks.md"
    out.write_text("\n".join(parts), encoding="utf-8")
    return out


def _relink(markdown: str, folder: str) -> str:
    """A report's relative links (`[x](search_stdio.md)`, written from docs/benchmarks/) as seen from docs/."""

    def fix(found: re.Match[str]) -> str:
        target = found.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:|/|#", target):  # a URL, an absolute path, an anchor
            return found.group(0)
        return f"{found.group(1)}({folder}/{target})"

    return re.sub(r"(\[[^\]\n]*\])\(([^)\s]+)\)", fix, markdown)


def main(argv: list[str]) -> int:
    if argv == ["--collect"]:
        print(f"wrote {collect()}")
        return 0
    chosen = argv or BENCHMARKS
    unknown = [b for b in chosen if b not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    failed = []
    for name in chosen:
        print(f"== bench.{name}", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, "-m", f"bench.{name}"])
        print(f"== bench.{name}: exit {code} after {time.perf_counter() - start:.0f} s", flush=True)
        if code:
            failed.append(name)
    print(f"wrote {collect()}")
    if failed:
        print(f"benchmarks that failed or missed a target: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
