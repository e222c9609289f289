"""`run_tests` with `command`: pytest inside a command is judged by its own report, other runners by the exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_tests

ONE_OF_EACH = {
    "tests/test_two.py": """
        def test_ok():
            assert True

        def test_bad():
            assert 1 + 1 == 3
    """,
}

CLEAN = {"tests/test_ok.py": "def test_a():\n    pass\n\ndef test_b():\n    pass\n"}


def local(config: RunnerConfig, ws: Path, **kwargs):
    return run_tests(ws, backend="local", config=config, **kwargs)


def test_a_pipe_or_or_true_that_hides_pytests_failure_is_failed_with_a_warning(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws = make_workspace(ONE_OF_EACH)
    for command in ("python -m pytest -q | tail -n 3", "python -m pytest -q || true", "python -m pytest -q; echo done"):
        result = local(runner_config, ws, command=command)
        assert result.exit_code == 0, command
        assert (result.status, result.passed, result.failed) == ("failed", 1, 1), command
        assert [t.id for t in result.tests if t.outcome == "failed"] == ["tests/test_two.py::test_bad"]
        assert any("exited 0 but pytest's report has 1 failure(s)" in w for w in result.warnings), result.warnings
        assert result.reward.value < 1.0


def test_what_the_tests_print_cannot_add_to_the_counts(make_workspace, runner_config: RunnerConfig) -> None:
    fake = "\n".join(f"PASSED tests/test_liar.py::fake_{i}" for i in range(50))
    ws = make_workspace({
        **ONE_OF_EACH,
        "tests/test_liar.py": f'''
            def test_liar(capsys):
                with capsys.disabled():
                    print("\\n=== short test summary info ===\\n" + {fake!r} + "\\n=== 50 passed in 0.01s ===")
        ''',
    })  # fmt: skip
    result = local(runner_config, ws, command="python -m pytest -rA")
    assert (result.status, result.total, result.passed, result.failed) == ("failed", 3, 2, 1)
    assert not [t.id for t in result.tests if "fake_" in t.id]
    assert result.reward.components["pass_rate"] == round(2 / 3, 4)


def test_pytest_that_runs_no_test_is_no_tests_and_scores_nothing(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(ONE_OF_EACH)
    for command in ("python -m pytest --collect-only -q", "python -m pytest -k no_such_test_anywhere"):
        result = local(runner_config, ws, command=command)
        assert result.status == "no_tests", command
        assert result.reward.value == 0.0
        assert any("pytest ran no test" in w for w in result.warnings), result.warnings
    named = local(runner_config, ws, command="python -m pytest", tests=["tests/test_two.py::test_nope"])
    assert named.status == "error"
    assert any("no test named tests/test_two.py::test_nope" in w for w in named.warnings), named.warnings


def test_a_clean_report_with_a_failing_command_is_failed_naming_the_other_step(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws = make_workspace(CLEAN)
    result = local(runner_config, ws, command="python -m pytest -q && exit 2")
    assert (result.status, result.exit_code, result.passed) == ("failed", 2, 2)
    assert any("another step of the command failed" in w for w in result.warnings), result.warnings
    clean = local(runner_config, ws, command="python -m pytest -q")
    assert (clean.status, clean.total, clean.warnings) == ("passed", 2, [])
    assert clean.reward.value == 1.0


def test_a_command_that_shows_no_test_rests_on_its_exit_code_and_says_so(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws = make_workspace(ONE_OF_EACH)
    ok = local(runner_config, ws, command="true")
    assert (ok.status, ok.total) == ("passed", 0)
    assert any("no test result was seen" in w and "exit status (0) alone" in w for w in ok.warnings), ok.warnings
    bad = local(runner_config, ws, command="exit 3")
    assert (bad.status, bad.total) == ("failed", 0)
    assert bad.reward.components["runtime"] == 0.0  # nothing shows that a suite ran
    assert bad.reward.value == 0.2


def test_unittest_through_command_is_judged_by_its_exit_code(make_workspace, runner_config: RunnerConfig) -> None:
    unit = "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.fail('no')\n"
    ws = make_workspace({"test_unit.py": unit})
    result = local(runner_config, ws, command="python -m unittest -q")
    assert (result.status, result.exit_code) == ("failed", 1)
    assert "FAILED (failures=1)" in result.output_tail


def test_python_in_a_command_is_the_test_interpreter_when_its_dir_has_only_python3(
    make_workspace, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "only-python3"
    bin_dir.mkdir()
    python3 = bin_dir / "python3"
    python3.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python3.chmod(0o755)
    ws = make_workspace(CLEAN)
    config = RunnerConfig(test_python=str(python3))
    result = local(config, ws, command="python -c 'import sys; print(\"prefix=\" + sys.prefix)'")
    assert result.status == "passed", result.output_tail
    assert f"prefix={sys.prefix}" in result.output_tail
    tests = local(config, ws, command="python -m pytest -q")
    assert (tests.status, tests.passed) == ("passed", 2)


def test_a_venv_without_pytest_says_so_and_how_to_fix_it(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(CLEAN)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(ws / ".venv")], check=True)
    default = local(runner_config, ws)
    assert default.status == "error"
    assert any("has no pytest: install it there" in w for w in default.warnings), default.warnings
    command = local(runner_config, ws, command="python -m pytest")
    assert (command.status, command.reward.value) == ("failed", 0.2)
    assert any("has no pytest" in w for w in command.warnings), command.warnings
