"""The one error-line recogniser shared by the runner, the distiller and search."""

from __future__ import annotations

import pytest

from sandbox.errorlines import last_error_line, parse_error_line


@pytest.mark.parametrize(
    ("line", "qualified", "message"),
    [
        ("KeyError: 'user_id'", "KeyError", "'user_id'"),
        ("E       TypeError: unsupported operand", "TypeError", "unsupported operand"),
        ("json.decoder.JSONDecodeError: Expecting value", "json.decoder.JSONDecodeError", "Expecting value"),
        ("DeprecationWarning: use spam", "DeprecationWarning", "use spam"),
        ("StopIteration", "StopIteration", ""),
        ("  SystemExit:   2  ", "SystemExit", "2"),
        ("subprocess.TimeoutExpired: Command 'x' timed out", "subprocess.TimeoutExpired", "Command 'x' timed out"),
        ("E   ExceptionGroup: unhandled errors (1 sub)", "ExceptionGroup", "unhandled errors (1 sub)"),
        ("zipfile.BadZipFile: File is not a zip file", "zipfile.BadZipFile", "File is not a zip file"),
    ],
)
def test_error_lines_give_their_type_and_message(line: str, qualified: str, message: str) -> None:
    found = parse_error_line(line)
    assert found is not None
    assert (found.qualified, found.message) == (qualified, message)


@pytest.mark.parametrize(
    "line",
    [
        "raise KeyError(key)",
        "collected 3 items",
        "errors: 3",
        "terror: night",
        "",
        "MyErrorHandler: x",
        "Failedness",
        "raise TimeoutExpired(cmd, timeout)",
        "TimeoutExpiredHandler: x",
        "Timeout: 30 s",
    ],
)
def test_code_and_prose_are_not_error_lines(line: str) -> None:
    assert parse_error_line(line) is None


def test_the_short_type_drops_the_module() -> None:
    found = parse_error_line("requests.exceptions.ConnectionError: refused")
    assert found is not None
    assert (found.type, found.text) == ("ConnectionError", "ConnectionError: refused")


def test_inside_a_line_the_error_at_its_end_is_found() -> None:
    found = parse_error_line("FAILED tests/t.py::test_x - KeyError: 'a'", inside=True)
    assert found is not None
    assert found.text == "KeyError: 'a'"
    assert parse_error_line("FAILED tests/t.py::test_x - KeyError: 'a'") is None
    assert parse_error_line("tests/t.py:5: AssertionError", inside=True) == parse_error_line("AssertionError")


def test_the_last_raised_error_of_an_output_is_chosen_over_warnings_and_bare_types() -> None:
    output = "\n".join(
        [
            "ImportError while loading conftest '/w/conftest.py'.",
            "E   ModuleNotFoundError: No module named 'yaml'",
            "AssertionError",
            "  DeprecationWarning: pkg_resources is deprecated",
        ]
    )
    found = last_error_line(output)
    assert found is not None
    assert found.text == "ModuleNotFoundError: No module named 'yaml'"
    assert last_error_line("all good\n1 passed") is None


def test_a_run_that_ends_in_a_well_known_exception_without_an_error_suffix_names_it() -> None:
    found = last_error_line("Traceback ...\n  ...\nsubprocess.TimeoutExpired: Command '['sleep', '9']' timed out\n")
    assert found is not None
    assert (found.type, found.raised) == ("TimeoutExpired", True)
