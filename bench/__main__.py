"""`python -m bench` (`make bench`): run every benchmark, each in its own process, and report which failed."""

from __future__ import annotations

import subprocess
import sys
import time

BENCHMARKS = ["retrieval", "search", "startup", "patch", "run_tests", "redact", "ingest", "hooks", "distill"]


def main(argv: list[str]) -> int:
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
    if failed:
        print(f"benchmarks that failed or missed a target: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
