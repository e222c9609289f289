"""Test ids through a symlink inside the workspace run as written: under the link's directory (its conftest.py
applies) and reported with the ids that were asked for, as pytest itself runs them."""

from __future__ import annotations

import os
from pathlib import Path

from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_tests

FILES = {
    "tests/conftest.py": """
        import pytest

        @pytest.fixture
        def token():
            return "t"
    """,
    "shared/real_tests.py": """
        def test_real(token):
            assert token == "t"
    """,
    "realdir/test_fx.py": """
        def test_uses_fixture(token):
            assert token == "t"
    """,
}


def test_ids_through_a_linked_file_and_a_linked_directory_round_trip(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws: Path = make_workspace(FILES)
    os.symlink("../shared/real_tests.py", ws / "tests" / "test_link.py")
    os.symlink("../realdir", ws / "tests" / "linkeddir")
    wanted = ["tests/test_link.py::test_real", "tests/linkeddir/test_fx.py::test_uses_fixture"]

    whole = run_tests(ws, backend="local", timeout_s=120, config=runner_config, tests=["tests"])
    picked = run_tests(ws, backend="local", timeout_s=120, config=runner_config, tests=wanted)

    assert {(t.id, t.outcome) for t in whole.tests} == {(i, "passed") for i in wanted}
    assert (picked.status, picked.passed) == ("passed", 2)
    assert {(t.id, t.outcome) for t in picked.tests} == {(i, "passed") for i in wanted}


def test_a_path_written_with_dot_dot_or_absolute_is_still_taken_as_the_file_it_names(
    make_workspace, runner_config: RunnerConfig
) -> None:
    ws: Path = make_workspace({"tests/test_a.py": "def test_a():\n    pass\n"})

    result = run_tests(
        ws,
        backend="local",
        timeout_s=120,
        config=runner_config,
        tests=["tests/../tests/test_a.py::test_a", f"{ws}/tests/test_a.py", "./tests//test_a.py"],
    )

    assert [(t.id, t.outcome) for t in result.tests] == [("tests/test_a.py::test_a", "passed")]
