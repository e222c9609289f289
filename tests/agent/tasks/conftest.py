"""A tiny real project with a passing pytest suite, for synthesis and grading tests."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

PYTHON = sys.executable

FILES = {
    "calc/__init__.py": "",
    "calc/stats.py": """\
        def mean(values):
            if not values:
                raise ValueError("mean of no values")
            return sum(values) / len(values)


        def clamp(x, lo=0, hi=10):
            if x < lo:
                return lo
            if x > hi:
                return hi
            return x


        def window(items, size=2):
            out = []
            for i in range(len(items) - size + 1):
                out.append(items[i : i + size])
            return out
        """,
    "tests/test_stats.py": """\
        import pytest

        from calc.stats import clamp, mean, window


        def test_mean():
            assert mean([1, 2, 3]) == 2


        def test_mean_empty():
            with pytest.raises(ValueError):
                mean([])


        def test_clamp_low():
            assert clamp(-5) == 0


        def test_clamp_high():
            assert clamp(50) == 10


        def test_clamp_mid():
            assert clamp(5) == 5


        def test_window():
            assert window([1, 2, 3]) == [[1, 2], [2, 3]]


        def test_window_three():
            assert window([1, 2, 3, 4], 3) == [[1, 2, 3], [2, 3, 4]]
        """,
}


def write_project(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture
def calc_repo(tmp_path: Path) -> Path:
    return write_project(tmp_path / "calc-project")


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory):
    """Three tasks synthesized once from the calc project (shared: each verification runs the suite)."""
    from agent.tasks.synth import SynthConfig, synthesize

    base = tmp_path_factory.mktemp("synth")
    repo = write_project(base / "calc-project")
    report = synthesize(
        repo,
        base / "tasks",
        SynthConfig(n=3, seed=1, workers=2, test_python=PYTHON),
        project="calc",
        source="repo:calc",
    )
    return repo, base / "tasks", report
