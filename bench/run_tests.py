"""Benchmark of `run_tests` on a real project's suite: the sandboxes against bare `python -m pytest`.

The suite is more-itertools' own (its sdist ships `tests/`: ~660 tests and ~2,300 subtests, pure Python), downloaded
once into `.bench-cache/`. Each round runs, in turn, bare `python -m pytest` (the baseline), `run_tests` with the
local backend (bubblewrap when it works here), and `run_tests` with the Docker backend on a warm container (when an
engine and the image are there). Every figure is the median of the rounds, all with the same interpreter.

Targets: local and docker (warm) <= 1.15x bare each. Run: `python -m bench.run_tests [--rounds N]`;
the exit status is 1 when a measured target is missed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.common import ROOT, machine, write_report
from sandbox.exec.docker_engine import docker_problem, open_client, stop_containers
from sandbox.exec.local import LocalConfig
from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_tests

CACHE = ROOT / ".bench-cache"
PROJECT, VERSION = "more-itertools", "10.5.0"
#: Both backends against bare pytest (issue 12: the Docker backend within 1.15x of bare pytest).
TARGET_RATIO = 1.15


def fetch_suite() -> Path:
    """The unpacked sdist (downloaded with pip into `.bench-cache/` the first time)."""
    target = CACHE / f"{PROJECT}-{VERSION}"
    if (target / "tests").is_dir():
        return target
    CACHE.mkdir(exist_ok=True)
    archive = CACHE / f"{PROJECT}-{VERSION}.tar.gz"
    if not archive.exists():
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*pip, f"{PROJECT}=={VERSION}", "-d", str(CACHE)], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    # The sdist has no pytest config of its own; this one stops pytest from climbing up to skillbank's pyproject.
    (target / "pytest.ini").write_text("[pytest]\n")
    return target


#: The injected bug: `take(n, it)` returns n + 1 items. Recipes built on `take` fail with it, the rest pass.
BUG = ("    return list(islice(iterable, n))\n", "    return list(islice(iterable, n + 1))\n")


def buggy_copy(clean: Path) -> Path:
    """A copy of the suite with `BUG` in `more_itertools/recipes.py` (made once; refused if the line moved)."""
    target = clean.with_name(clean.name + "-bug")
    recipes = target / "more_itertools" / "recipes.py"
    if not recipes.exists():
        shutil.copytree(clean, target, dirs_exist_ok=True)
        text = recipes.read_text()
        if text.count(BUG[0]) != 1:
            raise SystemExit(f"bench: the line to inject the bug into is not in {recipes} once")
        recipes.write_text(text.replace(BUG[0], BUG[1]))
    return target


def timed(action: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    outcome = action()
    return time.perf_counter() - start, outcome


def bare(ws: Path) -> str:
    """Bare pytest's exit status and its summary line (the counts `run_tests` must agree with)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=ws, capture_output=True, text=True, check=False)
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return f"exit {done.returncode}: {tail.strip('= ')}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.run_tests", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    clean = fetch_suite()
    buggy = buggy_copy(clean)
    config = RunnerConfig(test_python=sys.executable)
    plain = config.model_copy(update={"local": LocalConfig(use_bwrap=False)})
    docker_reason = docker_problem(config.docker_image)

    runners: dict[str, Callable[[], object]] = {}
    for label, ws in (("", clean), (", injected bug", buggy)):
        runners[f"bare `python -m pytest` (baseline){label}"] = partial(bare, ws)
        runners[f"run_tests, local backend{label}"] = partial(run_tests, ws, backend="local", config=config)
        runners[f"run_tests, local without bubblewrap{label}"] = partial(run_tests, ws, backend="local", config=plain)
        if docker_reason is None:
            docker = partial(run_tests, ws, backend="docker", config=config)
            runners[f"run_tests, docker backend (warm){label}"] = docker
    times: dict[str, list[float]] = {name: [] for name in runners}
    checks: dict[str, str] = {}
    for name, action in runners.items():  # warm-up: caches, and the docker container
        _, outcome = timed(action)
        checks[name] = _describe(outcome)
    for _ in range(args.rounds):
        for name, action in runners.items():
            seconds, _ = timed(action)
            times[name].append(seconds)
    if docker_reason is None:
        with open_client() as client:
            for ws in (clean, buggy):
                stop_containers(client, ws.resolve())
    medians = {name: statistics.median(values) for name, values in times.items()}
    markdown, missed = report(medians, times, checks, docker_reason, args.rounds)
    print(markdown)
    write_report(markdown, "run_tests")
    if missed:
        sys.exit(1)


def _describe(outcome: object) -> str:
    if isinstance(outcome, str):
        return outcome
    status, passed, failed = (getattr(outcome, name, "?") for name in ("status", "passed", "failed"))
    return f"{status}, {failed} failed, {passed} passed, backend {getattr(outcome, 'backend', '?')}"


def report(
    medians: dict[str, float],
    times: dict[str, list[float]],
    checks: dict[str, str],
    docker_reason: str | None,
    rounds: int,
) -> tuple[str, bool]:
    """The markdown report, and whether a target was missed."""
    base_name = next(iter(medians))
    rows = []
    missed = False
    for name, median in medians.items():
        base = medians[base_name + (", injected bug" if name.endswith(", injected bug") else "")]
        spread = f"{min(times[name]):.2f}-{max(times[name]):.2f}"
        target, verdict = "", ""
        if "local backend" in name or "docker" in name:
            target = f"<= {TARGET_RATIO}x"
            verdict = "pass" if median <= base * TARGET_RATIO else "FAIL"
            missed = missed or verdict == "FAIL"
        ratio = median / base
        rows.append(
            f"| {name} | {median:.3f} | {spread} | {ratio:.3f}x | {median - base:+.3f} | {target} | {verdict} "
            f"| {checks[name]} |"
        )
    lines = [
        "# Benchmark: run_tests",
        "",
        f"Suite: {PROJECT} {VERSION} (its sdist's own `tests/`), run {rounds} rounds after one warm-up each;",
        "seconds are wall-clock medians of the whole call (for `run_tests`: argument checks, syntax check, sandbox,",
        "pytest with a junit report, parsing and reward). Generated by `python -m bench.run_tests`.",
        "",
        machine(),
        f"Baseline: {base_name}, on the same tree (clean or with the injected bug).",
        "",
        "| runner | median s | min-max s | vs bare | extra s | target | result | warm-up run |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
    ]
    if docker_reason is not None:
        lines += [f"Docker backend not measured here: {docker_reason}.", ""]
    return "\n".join(lines), missed


if __name__ == "__main__":
    main()
