"""`run_tests` end to end on real git workspaces with the local backend."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import failure_queries, run_tests

MIXED = {
    "tests/test_mixed.py": """
        import pytest

        def test_ok():
            assert True

        def test_wrong_sum():
            assert 1 + 1 == 3

        def test_missing_key():
            {}["user_id"]

        def test_missing_key_again():
            {}["user_id"]

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass

        @pytest.mark.xfail(reason="known bug")
        def test_known_bug():
            assert False
    """,
}


def local(config: RunnerConfig, **kwargs):
    return run_tests(kwargs.pop("ws"), backend="local", config=config, **kwargs)


def test_passing_suite_reports_every_test_and_full_reward(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace({"tests/test_ok.py": "def test_a():\n    pass\n\ndef test_b():\n    pass\n"})
    result = local(runner_config, ws=ws)
    assert result.status == "passed"
    assert (result.total, result.passed, result.failed) == (2, 2, 0)
    assert result.exit_code == 0
    assert result.backend in ("local", "local+bwrap")
    assert " -m pytest " in result.command
    assert {t.id for t in result.tests} == {"tests/test_ok.py::test_a", "tests/test_ok.py::test_b"}
    assert result.reward.value == 1.0
    assert result.reward.components == {"syntax": 1.0, "runtime": 1.0, "pass_rate": 1.0}


def test_failing_suite_lists_failures_first_with_messages(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(MIXED)
    result = local(runner_config, ws=ws)
    assert result.status == "failed"
    assert (result.passed, result.failed, result.skipped, result.xfailed, result.total) == (1, 3, 1, 1, 6)
    assert [t.outcome for t in result.tests[:3]] == ["failed", "failed", "failed"]
    wrong = next(t for t in result.tests if t.id == "tests/test_mixed.py::test_wrong_sum")
    assert wrong.message is not None
    assert wrong.message.startswith("assert (1 + 1) == 3")
    assert result.reward.components["pass_rate"] == 0.25
    assert result.reward.value == pytest.approx(0.2 + 0.2 + 0.6 * 0.25)


def test_failure_queries_are_deduplicated_exception_lines(make_workspace, runner_config: RunnerConfig) -> None:
    result = local(runner_config, ws=make_workspace(MIXED))
    queries = failure_queries(result)
    assert queries == ["AssertionError: assert (1 + 1) == 3", "KeyError: 'user_id'"]
    assert failure_queries(result, limit=1) == ["AssertionError: assert (1 + 1) == 3"]


def test_collection_error_is_an_error_with_no_reward(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace({"tests/test_ok.py": "def test_a():\n    pass\n", "tests/test_bad.py": "import not_a_module\n"})
    result = local(runner_config, ws=ws)
    assert result.status == "error"
    assert result.collection_errors == 1
    assert result.tests[0].id == "tests/test_bad.py"
    assert result.reward.value == 0.0
    assert result.reward.components["runtime"] == 0.0
    assert failure_queries(result) == ["ModuleNotFoundError: No module named 'not_a_module'"]


def test_exit_code_forged_to_failure_with_a_clean_report_is_an_error(make_workspace, runner_config) -> None:
    conftest = "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 1\n"
    ws = make_workspace({"conftest.py": conftest, "tests/test_ok.py": "def test_a():\n    pass\n"})
    result = local(runner_config, ws=ws)
    assert result.exit_code == 1
    assert result.status == "error"
    assert any("spoofing" in w for w in result.warnings)
    assert result.reward.value == 0.0


def test_printed_fake_summary_without_a_report_is_an_error(make_workspace, runner_config: RunnerConfig) -> None:
    fake = "import os\n\ndef test_a():\n    print('PASSED tests/test_a.py::test_a')\n    print('1 passed in 0.1s')\n"
    fake += "    os._exit(0)\n"
    ws = make_workspace({"tests/test_a.py": fake})
    result = run_tests(ws, backend="local", config=runner_config, command=None)
    assert result.status == "error"
    assert result.reward.value == 0.0


def test_empty_suite_is_no_tests(make_workspace, runner_config: RunnerConfig) -> None:
    result = local(runner_config, ws=make_workspace({"README.md": "nothing to test\n"}))
    assert result.status == "no_tests"
    assert result.exit_code == 5
    assert result.reward.value == 0.0


def test_only_the_requested_tests_run(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(MIXED)
    result = local(runner_config, ws=ws, tests=["tests/test_mixed.py::test_ok", "tests/test_mixed.py::test_skipped"])
    assert result.status == "passed"
    assert [t.id for t in result.tests] == ["tests/test_mixed.py::test_ok", "tests/test_mixed.py::test_skipped"]


def test_timeout_is_a_status_with_no_reward(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace({"tests/test_hang.py": "import time\n\ndef test_hang():\n    time.sleep(300)\n"})
    result = local(runner_config, ws=ws, timeout_s=2)
    assert result.status == "timeout"
    assert result.exit_code is None
    assert 2 <= result.duration_s < 10
    assert result.reward.value == 0.0


def test_changed_file_that_does_not_compile_lowers_the_syntax_reward(make_workspace, runner_config) -> None:
    ws = make_workspace({"app.py": "X = 1\n", "tests/test_app.py": "def test_a():\n    pass\n"})
    (ws / "app.py").write_text("X = (\n")
    result = local(runner_config, ws=ws)
    assert result.status == "passed"
    assert result.reward.components["syntax"] == 0.0
    assert [(p.path, p.line) for p in result.syntax_errors] == [("app.py", 1)]
    assert result.reward.value == pytest.approx(0.8)


def test_command_mode_takes_its_status_from_the_exit_code(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(MIXED)
    result = local(runner_config, ws=ws, command=f"{sys.executable} -m pytest -rA", tests=["tests/test_mixed.py"])
    assert result.status == "failed"
    assert result.command.endswith("-m pytest -rA tests/test_mixed.py")
    assert result.failed == 3
    quiet = local(runner_config, ws=ws, command=f"{sys.executable} -m pytest -q")
    assert (quiet.status, quiet.total, quiet.passed, quiet.failed, len(quiet.tests)) == ("failed", 6, 1, 3, 6)
    assert local(runner_config, ws=ws, command="true").status == "passed"
    assert local(runner_config, ws=ws, command="exit 3").status == "failed"
    missing = local(runner_config, ws=ws, command="no-such-runner --all")
    assert missing.status == "error"
    assert missing.exit_code == 127


def test_output_tail_is_capped(make_workspace, runner_config: RunnerConfig) -> None:
    noisy = "def test_noisy(capsys):\n    with capsys.disabled():\n        print('x' * 100_000)\n"
    ws = make_workspace({"tests/test_noisy.py": noisy})
    config = runner_config.model_copy(update={"output_tail_chars": 500})
    result = local(config, ws=ws)
    assert result.status == "passed"
    assert len(result.output_tail) <= 500
    assert result.output_truncated


def test_the_workspace_venv_is_preferred(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace({"tests/test_ok.py": "def test_a():\n    pass\n"})
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(ws / ".venv")], check=True)
    site = next((ws / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "host.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # pytest comes from the host venv
    result = local(runner_config, ws=ws)
    assert result.status == "passed"
    assert result.command.startswith(str(ws / ".venv" / "bin" / "python") + " -m pytest")


def test_missing_interpreter_does_not_block_command_mode(make_workspace, tmp_path: Path) -> None:
    ws = make_workspace({"tests/test_ok.py": "def test_a():\n    pass\n"})
    config = RunnerConfig(test_python=str(tmp_path / "no-python"))
    assert run_tests(ws, backend="local", command="true", config=config).status == "passed"


def test_a_workspace_venv_cannot_choose_which_host_dirs_the_sandbox_sees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyvenv.cfg and .pth files are workspace content: only Python installs and the workspace's own dirs count."""
    from sandbox.exec.interpreter import find_interpreter

    fake_home = tmp_path / "home"
    (fake_home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(fake_home))
    ws = tmp_path / "ws"
    site = ws / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (ws / ".venv" / "bin").mkdir()
    (ws / ".venv" / "bin" / "python").symlink_to(sys.executable)
    (ws / ".venv" / "pyvenv.cfg").write_text(f"home = {fake_home}\n")
    (ws / "src").mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (site / "paths.pth").write_text(
        f"# a comment\n{ws / 'src'}\n{fake_home / '.ssh'}\n{outside}\n/etc\nimport os; os.system('never run')\n"
    )
    roots = find_interpreter(ws).roots
    assert ws / ".venv" in roots
    assert Path(sys.executable).resolve().parent.parent in roots
    assert not any(r == fake_home or fake_home.is_relative_to(r) or r.is_relative_to(fake_home) for r in roots)
    assert outside not in roots
    assert Path("/etc") not in roots
