"""Reports that junit alone gets wrong, read as pytest meant them: subtests, a module-level skip's reason, a junit
prefix from the project's addopts, and a conftest.py that fails to import."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.testing.config import RunnerConfig
from sandbox.testing.results import parse_junit
from sandbox.testing.runner import run_tests


def local(ws: Path, config: RunnerConfig, **kwargs) -> object:
    return run_tests(ws, backend="local", timeout_s=120, config=config, **kwargs)


SUBTESTS = {
    "tests/test_sub.py": """
        import unittest

        class T(unittest.TestCase):
            def test_one_subtest_fails(self):
                for i in range(3):
                    with self.subTest(i=i):
                        self.assertLess(i, 2)

            def test_one_subtest_skips(self):
                for i in range(2):
                    with self.subTest(i=i):
                        if i:
                            self.skipTest("not on this platform")

            def test_skipped_whole(self):
                self.skipTest("whole test")

            def test_plain(self):
                pass
    """,
}


def test_a_skipped_subtest_leaves_its_test_passed_and_a_failed_one_fails_it(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws = make_workspace(SUBTESTS)

    result = local(ws, runner_config)

    outcomes = {t.id.rsplit("::", 1)[1]: t.outcome for t in result.tests}
    assert outcomes == {
        "test_one_subtest_fails": "failed",
        "test_one_subtest_skips": "passed",
        "test_skipped_whole": "skipped",
        "test_plain": "passed",
    }
    assert (result.status, result.total, result.passed, result.failed, result.skipped) == ("failed", 4, 2, 1, 1)
    failed = next(t for t in result.tests if t.outcome == "failed")
    assert failed.message is not None
    assert "AssertionError: 2 not less than 2" in failed.message


def test_a_module_level_skip_is_listed_with_its_reason(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(
        {
            "tests/test_gpu.py": """
                import pytest

                pytest.skip("needs a GPU", allow_module_level=True)

                def test_kernel():
                    pass
            """,
            "tests/test_cpu.py": "def test_cpu():\n    pass\n",
        }
    )

    result = local(ws, runner_config)

    assert (result.status, result.passed, result.skipped) == ("passed", 1, 1)
    [skipped] = [t for t in result.tests if t.outcome == "skipped"]
    assert skipped.message == "needs a GPU"


def test_a_collection_skip_whose_text_is_not_pytests_tuple_keeps_junits_message(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite><testcase classname="" name="test_m" file="test_m.py">'
        '<skipped message="collection skipped">__import__("os").system("true")</skipped>'
        "</testcase></testsuite></testsuites>"
    )

    [case] = parse_junit(report).tests

    assert (case.outcome, case.message) == ("skipped", "collection skipped")


def test_a_junit_prefix_in_the_projects_addopts_does_not_change_the_ids(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws = make_workspace(
        {
            "pytest.ini": "[pytest]\naddopts = --junit-prefix=ci\n",
            "tests/test_p.py": """
                import pytest

                def test_fails():
                    assert 0

                @pytest.mark.xfail(reason="known")
                def test_xpasses():
                    pass
            """,
        }
    )

    result = local(ws, runner_config)

    assert {(t.id, t.outcome) for t in result.tests} == {
        ("tests/test_p.py::test_fails", "failed"),
        ("tests/test_p.py::test_xpasses", "xpassed"),
    }


def test_a_projects_junit_logging_does_not_put_the_tests_output_in_the_report(
    make_workspace, runner_config: RunnerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`junit_logging = all` (a CI setting) wrote every test's output into the report, which then outgrew the
    report limit: the run was an `error` with reward 0 although pytest said 1 failed, 3 passed."""
    import sandbox.testing.runner as runner

    sizes: list[int] = []
    original = runner.parse_junit

    def measured(path, *args, **kwargs):
        sizes.append(path.stat().st_size)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(runner, "parse_junit", measured)
    ws = make_workspace(
        {
            "pytest.ini": "[pytest]\njunit_logging = all\njunit_log_passing_tests = true\n",
            "tests/test_loud.py": """
                import pytest

                @pytest.mark.parametrize("n", range(3))
                def test_loud(n):
                    print("x" * 100_000)

                def test_fails():
                    print("y" * 100_000)
                    assert 1 == 2
            """,
        }
    )

    result = local(ws, runner_config)

    assert (result.status, result.passed, result.failed) == ("failed", 3, 1)
    [size] = sizes
    assert size < 50_000  # the 400 KB the tests printed are not in it
    [failed] = [t for t in result.tests if t.outcome == "failed"]
    assert "assert 1 == 2" in (failed.message or "")


def test_a_conftest_that_fails_to_import_is_named_in_the_warning(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace(
        {"conftest.py": "import not_installed_plugin\n", "tests/test_a.py": "def test_a():\n    pass\n"}
    )

    result = local(ws, runner_config)

    assert (result.status, result.exit_code) == ("error", 4)
    [warning] = [w for w in result.warnings if "conftest" in w]
    assert "a conftest.py failed to import" in warning
    assert "conftest.py: ModuleNotFoundError: No module named 'not_installed_plugin'" in warning
    assert "usage error" not in warning


def test_a_test_that_calls_pytest_exit_with_returncode_0_does_not_make_the_run_pass(
    make_workspace, runner_config: RunnerConfig
) -> None:
    """pytest exits 0 with the one test before it passed: read as is, a passing run with reward 1."""
    ws = make_workspace(
        {
            "tests/test_stop.py": """
                import pytest

                def test_a():
                    pass

                def test_b():
                    pytest.exit("giving up early", returncode=0)

                def test_c():
                    assert 0
            """,
        }
    )

    result = local(ws, runner_config)

    assert result.exit_code == 0
    assert result.status == "error"
    assert result.reward.value < 1
    assert any("pytest.exit() stopped the run early ('giving up early'" in w for w in result.warnings)


def test_a_test_that_crashes_an_xdist_worker_is_a_failure_as_pytest_counts_it(
    make_workspace, runner_config: RunnerConfig
) -> None:
    """junit writes the crash as an error `failed on setup`; pytest's own line and totals say FAILED."""
    pytest.importorskip("xdist")
    ws = make_workspace(
        {
            "pytest.ini": "[pytest]\naddopts = -n 2\n",
            "tests/test_a.py": """
                import os

                def test_ok():
                    pass

                def test_crash():
                    os._exit(1)

                def test_fail():
                    assert 0
            """,
        }
    )

    result = local(ws, runner_config)

    assert (result.status, result.passed, result.failed, result.errors) == ("failed", 1, 2, 0)
    [crash] = [t for t in result.tests if t.id == "tests/test_a.py::test_crash"]
    assert crash.outcome == "failed"
    assert (crash.message or "").startswith("worker 'gw")
    assert "failed on setup" not in (crash.message or "")


def test_a_test_name_that_matches_nothing_is_named_in_the_warning(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace({"tests/test_a.py": "def test_a():\n    pass\n"})

    result = local(ws, runner_config, tests=["tests/test_a.py::test_nope", "tests/test_a.py::test_a"])

    assert result.status == "error"
    [warning] = result.warnings
    assert warning.startswith("pytest exit 4: no test matches tests/test_a.py::test_nope (the file is there")
