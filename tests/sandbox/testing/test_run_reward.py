"""The reward: syntax of changed files (real git repos), runtime, pass rate, weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.testing.reward import changed_python_files, check_syntax, compute_reward, normalise_weights, pass_rate


def test_default_weights_are_documented_and_normalised() -> None:
    assert normalise_weights(None) == {"pass_rate": 0.6, "runtime": 0.2, "syntax": 0.2}
    assert normalise_weights({"pass_rate": 3, "runtime": 1}) == {"pass_rate": 0.75, "runtime": 0.25, "syntax": 0.0}


@pytest.mark.parametrize(
    ("weights", "message"),
    [({"speed": 1.0}, "unknown reward components"), ({"syntax": -1.0, "runtime": 2}, "non-negative"), ({}, "not all")],
)
def test_bad_weights_are_refused_with_what_to_change(weights: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalise_weights(weights)


def test_reward_is_the_weighted_sum_of_its_components() -> None:
    reward = compute_reward(syntax=1.0, ran=True, pass_rate=0.5, valid=True, weights={"syntax": 1, "pass_rate": 1})
    assert reward.value == pytest.approx(0.75)
    assert reward.components == {"syntax": 1.0, "runtime": 1.0, "pass_rate": 0.5}
    assert reward.valid


def test_invalid_run_earns_nothing_but_keeps_its_components() -> None:
    reward = compute_reward(syntax=1.0, ran=False, pass_rate=0.0, valid=False, weights=normalise_weights(None))
    assert reward.value == 0.0
    assert reward.components["syntax"] == 1.0
    assert not reward.valid


def test_pass_rate_ignores_skips_and_counts_xpasses_as_passes() -> None:
    assert pass_rate(passed=2, failed=1, errors=1, xpassed=0) == pytest.approx(0.5)
    assert pass_rate(passed=1, failed=0, errors=0, xpassed=1) == 1.0
    assert pass_rate(0, 0, 0) == 0.0


def test_only_files_changed_since_head_or_untracked_are_checked(make_workspace, tmp_path: Path) -> None:
    ws = make_workspace({"a.py": "x = 1\n", "b.py": "y = 2\n", "c.txt": "text\n"})
    (ws / "b.py").write_text("y = (\n")
    (ws / "new.py").write_text("z = 3\n")
    (ws / "c.txt").write_text("changed\n")
    assert [p.name for p in changed_python_files(ws)] == ["b.py", "new.py"]
    report = check_syntax(ws)
    assert report.checked == 2
    assert [(p.path, p.line) for p in report.problems] == [("b.py", 1)]
    assert report.score == 0.5


def test_unchanged_repo_has_a_perfect_syntax_score(make_workspace) -> None:
    ws = make_workspace({"a.py": "x = (\n"})
    report = check_syntax(ws)
    assert report.checked == 0
    assert report.score == 1.0


def test_without_git_every_python_file_is_checked_except_virtualenvs(make_workspace) -> None:
    ws = make_workspace(
        {"pkg/m.py": "def f(:\n", "ok.py": "pass\n", ".venv/lib/bad.py": "def (\n", "node_modules/x.py": "(\n"},
        commit=False,
    )
    report = check_syntax(ws)
    assert report.checked == 2
    assert [p.path for p in report.problems] == ["pkg/m.py"]


def test_deleted_files_are_not_checked(make_workspace) -> None:
    ws = make_workspace({"gone.py": "x = 1\n"})
    (ws / "gone.py").unlink()
    assert changed_python_files(ws) == []


def test_source_that_exhausts_the_compiler_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text("x = " + "-" * 200_000 + "1\n")
    (tmp_path / "fine.py").write_text("y = 1\n")
    report = check_syntax(tmp_path)
    assert report.checked == 2
    assert [p.path for p in report.problems] == ["deep.py"]
