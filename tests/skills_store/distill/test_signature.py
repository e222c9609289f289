"""Error signatures: specifics abstracted, the kind of error kept."""

from __future__ import annotations

import pytest

from skills_store.distill.signature import abstract_message, error_type, from_error_line, from_failure, from_output


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("NameError: name 'itemz' is not defined", "NameError: name '<name>' is not defined"),
        ("ModuleNotFoundError: No module named 'yaml'", "ModuleNotFoundError: No module named 'yaml'"),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/data/x.csv'",
            "FileNotFoundError: [Errno <n>] No such file or directory: '<path>'",
        ),
        ("assert 3 == 4", "AssertionError: assert <n> == <n>"),
        ("E   AssertionError: assert [1, 2] == [1]", "AssertionError: assert [<n>, <n>] == [<n>]"),
        (
            "TypeError: f() takes 2 positional arguments but 3 were given",
            "TypeError: f() takes <n> positional arguments but <n> were given",
        ),
        (
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
            "JSONDecodeError: Expecting value: line <n> column <n> (char <n>)",
        ),
        (
            "RuntimeError: <Cart object at 0x7f3a2b> closed at 2024-01-02T10:00:00Z",
            "RuntimeError: <Cart object> closed at <datetime>",
        ),
        ("ZeroDivisionError: division by zero", "ZeroDivisionError: division by zero"),
    ],
)
def test_error_lines_keep_their_kind_and_lose_their_specifics(line: str, expected: str) -> None:
    signature = from_error_line(line)
    assert signature is not None
    assert signature.text == expected
    assert signature.example.endswith(" ".join(line.split()).removeprefix("E ").strip())


def test_two_errors_that_differ_only_in_names_have_one_signature() -> None:
    a = from_error_line("KeyError: 'user_id'")
    b = from_error_line("KeyError: 'order'")
    assert a is not None
    assert b is not None
    assert a.text == b.text == "KeyError: '<name>'"


def test_a_line_that_is_no_error_has_no_signature() -> None:
    assert from_error_line("collected 3 items") is None
    assert from_error_line("") is None
    assert from_failure("t", None) is None


def test_a_run_tests_failure_message_gives_the_signature_and_where_it_was_raised() -> None:
    message = (
        "NameError: name 'itemz' is not defined\n>       return sum(i.price for i in itemz)\n"
        "E       NameError: name 'itemz' is not defined\n\nshop.py:2: NameError"
    )
    signature = from_failure("tests/test_shop.py::test_total", message)
    assert signature is not None
    assert (signature.text, signature.location) == ("NameError: name '<name>' is not defined", "shop.py:2")


def test_pytest_short_summary_lines_in_shell_output_give_one_signature_per_failing_test() -> None:
    output = (
        "tests/test_a.py F.\n=== short test summary info ===\n"
        "FAILED tests/test_a.py::test_x - KeyError: 'id'\nFAILED tests/test_a.py::test_y - assert 1 == 2\n"
        "2 failed, 1 passed in 0.1s\n"
    )
    found = from_output(output)
    assert [(tid, sig.text) for tid, sig in found] == [
        ("tests/test_a.py::test_x", "KeyError: '<name>'"),
        ("tests/test_a.py::test_y", "AssertionError: assert <n> == <n>"),
    ]


def test_a_crash_before_any_test_gives_the_last_error_line() -> None:
    output = "Traceback (most recent call last):\n  File 'x.py'\nImportError: cannot import name 'Cart' from 'shop'\n"
    [(tid, sig)] = from_output(output)
    assert (tid, sig.text) == ("", "ImportError: cannot import name '<name>' from '<name>'")


def test_long_messages_are_cut_at_a_word_boundary() -> None:
    text = abstract_message("word " * 200)
    assert len(text) <= 250
    assert text.endswith(" ...")


def test_the_error_type_is_read_from_a_pattern() -> None:
    assert error_type("ModuleNotFoundError: No module named '<name>'") == "ModuleNotFoundError"
    assert error_type("requests.exceptions.ConnectionError: refused") == "ConnectionError"
    assert error_type("When the tests hang") is None


def test_a_missing_fixture_has_a_signature_so_its_fix_can_be_learned() -> None:
    message = (
        'failed on setup with "file /ws/test_store.py, line 3\n  def test_save(tmpdir_path):\n'
        "E       fixture 'tmpdir_path' not found\n>       available fixtures: cache, capsys, tmp_path\n"
        ">       use 'pytest --fixtures [testpath]' for help on them.\n\n/ws/test_store.py:3\""
    )
    sig = from_failure("test_store.py::test_save", message)
    assert sig is not None
    assert sig.text == "FixtureLookupError: fixture '<name>' not found"
    assert from_failure("test_db.py::test_q", message.replace("tmpdir_path", "db")) == sig.__class__(
        sig.exc_type, sig.message, "FixtureLookupError: fixture 'db' not found", sig.location
    )
    assert from_error_line("the fixture 'x' not found anywhere") is None  # only pytest's own line
