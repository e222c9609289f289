"""`run_tests` lists the node ids pytest itself prints, relative to the workspace, on real projects.

Each test compares with plain `python -m pytest -rA` in the same project where that is meaningful.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sandbox.testing.config import RunnerConfig
from sandbox.testing.results import junit_node_id, split_summary
from sandbox.testing.runner import run_tests

_LABELS = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "XFAIL": "xfailed", "XPASS": "xpassed"}


def local(ws: Path, config: RunnerConfig, **kwargs) -> object:
    return run_tests(ws, backend="local", timeout_s=120, config=config, **kwargs)


def plain_pytest(ws: Path, *args: str) -> list[str]:
    """The `-rA` short summary lines of plain pytest in `ws`."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", *args],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    return [line for line in out.splitlines() if line.split(" ", 1)[0] in _LABELS]


def plain_outcomes(ws: Path, *args: str) -> set[tuple[str, str]]:
    """(id, outcome) from plain pytest's summary, for ids without ` - ` (the message follows the first one)."""
    found = set()
    for line in plain_pytest(ws, *args):
        label, rest = line.split(" ", 1)
        found.add((rest.split(" - ", 1)[0], _LABELS[label]))
    return found


INHERITED = {
    "tests/__init__.py": "",
    "tests/base.py": """
        class Base:
            value = None

            def test_positive(self):
                assert self.value > 0
    """,
    "tests/helpers.py": "def test_shared():\n    pass\n",
    "tests/test_one.py": """
        from tests.base import Base
        from tests.helpers import test_shared

        class TestOne(Base):
            value = 1
    """,
    "tests/test_two.py": """
        from tests.base import Base

        class TestTwo(Base):
            value = -2
    """,
}


def test_inherited_and_imported_tests_keep_the_collecting_modules_ids(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws = make_workspace(INHERITED)
    result = local(ws, runner_config)
    expected = {
        ("tests/test_one.py::test_shared", "passed"),
        ("tests/test_one.py::TestOne::test_positive", "passed"),
        ("tests/test_two.py::TestTwo::test_positive", "failed"),
    }
    assert plain_outcomes(ws) == expected
    assert {(t.id, t.outcome) for t in result.tests} == expected
    assert (result.status, result.total, result.passed, result.failed) == ("failed", 3, 2, 1)


def test_ids_are_relative_to_the_workspace_when_pytests_rootdir_is_a_subdirectory(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws = make_workspace({"tests/pytest.ini": "[pytest]\n", "tests/test_r.py": "def test_a():\n    pass\n"})
    result = local(ws, runner_config, tests=["tests/test_r.py"])
    assert plain_outcomes(ws, "tests/test_r.py") == {("tests/test_r.py::test_a", "passed")}
    assert [(t.id, t.outcome) for t in result.tests] == [("tests/test_r.py::test_a", "passed")]
    again = local(ws, runner_config, tests=[result.tests[0].id])  # a listed id can be run again
    assert (again.status, [t.id for t in again.tests]) == ("passed", ["tests/test_r.py::test_a"])


DASHED = {
    "tests/test_d.py": """
        import pytest

        @pytest.mark.parametrize("x", ["c - d"])
        def test_f(x):
            assert 0

        @pytest.mark.xfail(reason="known")
        @pytest.mark.parametrize("x", ["a - b"])
        def test_xp(x):
            pass
    """,
}


def test_parameter_ids_with_a_dash_are_read_whole(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(DASHED)
    lines = plain_pytest(ws)
    assert any(line.startswith("FAILED tests/test_d.py::test_f[c - d] - ") for line in lines)
    assert "XPASS tests/test_d.py::test_xp[a - b] - known" in lines
    expected = {("tests/test_d.py::test_f[c - d]", "failed"), ("tests/test_d.py::test_xp[a - b]", "xpassed")}
    for command in (None, f"{sys.executable} -m pytest -rA -p no:cacheprovider"):
        result = local(ws, runner_config, command=command)
        assert {(t.id, t.outcome) for t in result.tests} == expected, command
        failed = next(t for t in result.tests if t.outcome == "failed")
        assert failed.message is not None, command
        assert failed.message.startswith("assert 0"), command
        assert (result.failed, result.xpassed, result.passed) == (1, 1, 0), command


def test_keyboard_interrupt_lists_no_phantom_test(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace({"tests/test_k.py": "def test_k():\n    raise KeyboardInterrupt\n"})
    result = local(ws, runner_config)
    assert result.status == "error"
    assert result.tests == []
    assert (result.total, result.passed) == (0, 0)
    assert any("interrupted" in w for w in result.warnings), result.warnings


def test_disabled_junitxml_plugin_is_named_in_the_warning(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(
        {"pytest.ini": "[pytest]\naddopts = -p no:junitxml\n", "tests/test_a.py": "def test_a():\n    pass\n"}
    )
    result = local(ws, runner_config)
    assert result.status == "error"  # the terminal text alone is not trusted to call a run passed
    assert any("no:junitxml" in w for w in result.warnings), result.warnings
    assert not any("crashed" in w for w in result.warnings), result.warnings


def test_usage_error_without_a_report_says_so(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(
        {"pytest.ini": "[pytest]\naddopts = --no-such-option\n", "tests/test_a.py": "def test_a():\n    pass\n"}
    )
    result = local(ws, runner_config)
    assert (result.status, result.exit_code) == ("error", 4)
    assert any("usage error" in w for w in result.warnings), result.warnings


def test_memory_hint_is_only_for_sigkill(make_workspace, runner_config: RunnerConfig) -> None:
    kill = "import os, signal\n\ndef test_die():\n    os.kill(os.getpid(), signal.SIG{})\n"
    segv = local(make_workspace({"tests/test_s.py": kill.format("SEGV")}, name="segv"), runner_config)
    assert segv.status == "error"
    assert any("SIGSEGV" in w for w in segv.warnings), segv.warnings
    assert not any("out of memory" in w for w in segv.warnings), segv.warnings
    killed = local(make_workspace({"tests/test_k.py": kill.format("KILL")}, name="kill"), runner_config)
    assert killed.status == "error"
    assert any("SIGKILL" in w and "out of memory" in w for w in killed.warnings), killed.warnings


def test_split_summary_is_bracket_aware() -> None:
    assert split_summary("t.py::test_f[c - d] - assert 0") == ("t.py::test_f[c - d]", "assert 0")
    assert split_summary("t.py::test_f[a] - x - y") == ("t.py::test_f[a]", "x - y")
    assert split_summary("t.py::test_f[a - b]") == ("t.py::test_f[a - b]", None)
    assert split_summary("t.py::test_f[a[b - c] - boom") == ("t.py::test_f[a[b - c]", "boom")


def test_junit_node_id_takes_the_module_from_classname(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_one.py").write_text("")
    assert junit_node_id("tests/base.py", "tests.test_one.TestOne", "test_p", tmp_path) == (
        "tests/test_one.py::TestOne::test_p"
    )
    assert junit_node_id("tests/helpers.py", "tests.test_one", "test_s", tmp_path) == "tests/test_one.py::test_s"
    assert junit_node_id("tests/helpers.py", "tests.test_one", "test_s") == "tests/test_one.py::test_s"
