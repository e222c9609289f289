"""Natural-language descriptions of the eval set's failures, as a developer or an agent would phrase them.

Each entry is (expected starter skill, the snippet it paraphrases or None, the description). They describe the
symptom in plain words and avoid the exact error text, so they test retrieval by meaning.
"""

from __future__ import annotations

DESCRIPTIONS: tuple[tuple[str, str | None, str], ...] = (
    (
        "starter-module-not-found",
        "module_not_found.py",
        "my upload script dies on the very first line because Python can't find the boto3 package at all",
    ),
    (
        "starter-module-not-found",
        None,
        "import yaml fails on a fresh machine, what package do I need to install to get it",
    ),
    (
        "starter-pip-wrong-interpreter",
        None,
        "pip says the library is already installed but my program still can't import it",
    ),
    (
        "starter-pip-wrong-interpreter",
        None,
        "the package imports fine from my terminal but the same script run from VS Code or cron can't see it",
    ),
    (
        "starter-circular-import",
        "circular_import",
        "models.py and orders.py import each other and now one of them fails to load because the other is only "
        "half set up",
    ),
    (
        "starter-cannot-import-name",
        "missing_export",
        "importing a helper function from my own tax module fails although the module itself loads fine; I think "
        "the function was renamed",
    ),
    (
        "starter-relative-import-beyond-top",
        "relative_import_beyond",
        "using two dots in a from-import to reach config in the parent folder blows up when I start the app from "
        "inside that folder",
    ),
    (
        "starter-module-shadowed-by-local-file",
        "shadowed_self_import",
        "I saved a practice script as random.py and now the random library seems to have lost its functions",
    ),
    (
        "starter-module-shadowed-by-local-file",
        "shadowed_stdlib",
        "after adding a json.py file to my project, json.loads suddenly doesn't exist anymore",
    ),
    (
        "starter-attribute-on-none",
        "attribute_on_none.py",
        "calling .group() on the result of re.match crashes for the one heading that does not match the pattern",
    ),
    (
        "starter-attribute-on-none",
        "attribute_on_none_get.py",
        "chained config.get('database').get('host') crashes when the config file has no database section",
    ),
    (
        "starter-none-not-subscriptable",
        "none_not_subscriptable.py",
        "I index into the dict my lookup function returns, but the function seems to give back nothing on the "
        "path where it found the user",
    ),
    (
        "starter-keyerror-missing-dict-key",
        "keyerror_payload.py",
        "reading a field from the parsed webhook JSON crashes because some events don't include that field",
    ),
    (
        "starter-indexerror-list-out-of-range",
        "indexerror_empty.py",
        "taking the last element of the sorted list of log files crashes when the folder has no logs",
    ),
    (
        "starter-wrong-positional-arg-count",
        "wrong_arg_count_self.py",
        "calling a method on my class complains I passed one argument too many, but I passed exactly two",
    ),
    (
        "starter-wrong-positional-arg-count",
        "wrong_arg_count_missing.py",
        "after I added a body parameter to send_email, old calls fail because an argument is missing",
    ),
    (
        "starter-unexpected-keyword-argument",
        "unexpected_keyword.py",
        "passing timeout=3 to my connect helper fails; the function doesn't know a parameter with that name",
    ),
    (
        "starter-unhashable-type",
        "unhashable_list.py",
        "I want to use [x, y] coordinate lists as dictionary keys to count visits and Python refuses",
    ),
    (
        "starter-not-json-serializable",
        "not_json_serializable.py",
        "json.dumps fails on my audit event because one of the values is a datetime",
    ),
    (
        "starter-coroutine-never-awaited",
        "coroutine_not_awaited.py",
        "I call my async fetch function from another async function but get a coroutine object back instead of "
        "the data",
    ),
    (
        "starter-unpack-wrong-number-of-values",
        "unpack_not_enough.py",
        "splitting host:port strings into two variables breaks on an entry that has no port",
    ),
    (
        "starter-unpack-wrong-number-of-values",
        "unpack_too_many.py",
        "looping over rows of three fields with for name, email in rows crashes",
    ),
    (
        "starter-recursion-depth-exceeded",
        "recursion_no_base_case.py",
        "my recursive sum function never stops for an empty list and Python eventually gives up on the call depth",
    ),
    (
        "starter-unbound-local-variable",
        "unbound_local.py",
        "incrementing a module-level counter inside a function fails, saying the variable has no value yet",
    ),
    (
        "starter-name-not-defined",
        "name_error_typo.py",
        "Python claims a variable doesn't exist but I'm sure I assigned it two lines above, maybe a typo",
    ),
    (
        "starter-name-not-defined",
        "name_error_missing_import.py",
        "my helper uses os.path.join and crashes because os is unknown in that file",
    ),
    (
        "starter-indentation-tabs-spaces",
        "tab_error.py",
        "after pasting code from a website the file mixes tabs and spaces and won't even start",
    ),
    (
        "starter-fstring-nested-quotes",
        "fstring_nested_quotes.py",
        "double quotes inside the braces of an f-string work on my laptop with Python 3.12 but CI on 3.11 "
        "rejects the file",
    ),
    (
        "starter-syntax-from-newer-python",
        "newer_syntax_type_alias.py",
        "the line 'type Vector = list[float]' is rejected as invalid on the server",
    ),
    (
        "starter-unicode-decode-wrong-encoding",
        "unicode_decode.py",
        "reading a CSV exported from Excel on Windows fails with a codec complaint about byte 0xe9",
    ),
    (
        "starter-file-not-found-relative-path",
        "file_not_found_relative.py",
        "my script opens config/settings.json fine from the project folder, but started from cron or another "
        "directory the file can't be found",
    ),
    (
        "starter-permission-denied",
        "permission_denied_exec.py",
        "running ./deploy.sh from subprocess fails with access denied, the script was checked out without +x",
    ),
    (
        "starter-permission-denied",
        None,
        "writing the report into /var/reports fails because my user isn't allowed to write there",
    ),
    (
        "starter-zero-division",
        "zero_division_average.py",
        "computing the average score crashes when no submission passes the threshold",
    ),
    (
        "starter-pytest-read-assertion-diff",
        "pytest_assert_diff.py",
        "pytest prints a long comparison between two dicts and I can't tell which side is the expected one",
    ),
    (
        "starter-pytest-fixture-not-found",
        "pytest_fixture_not_found.py",
        "pytest says it doesn't know the db_session fixture I defined in another test file",
    ),
    (
        "starter-pytest-import-file-mismatch",
        "pytest_import_mismatch",
        "I have test_utils.py in both tests/unit and tests/integration and pytest refuses to collect the second one",
    ),
    (
        "starter-pytest-collection-cannot-import-project",
        "pytest_collection_src_layout",
        "pytest can't import my package that lives under src/ while collecting, although the app runs fine",
    ),
    (
        "starter-pytest-async-tests-not-supported",
        "pytest_async_unsupported.py",
        "my async def test functions fail immediately because pytest has no way to run them",
    ),
    (
        "starter-mutable-default-argument",
        "pytest_mutable_default.py",
        "a function that builds a list of tags keeps remembering tags from previous calls",
    ),
    (
        "starter-mutable-default-argument",
        None,
        "tests pass one at a time, but run together a helper's result contains leftovers from the earlier test",
    ),
    (
        "starter-naive-vs-aware-datetime",
        "naive_aware_compare.py",
        "comparing datetime.now() with an expiry parsed from an ISO string ending in +00:00 raises about offsets",
    ),
    (
        "starter-float-equality",
        "pytest_float_equality.py",
        "my test says 0.1 + 0.2 is not equal to 0.3",
    ),
    (
        "starter-dict-changed-size-during-iteration",
        "dict_changed_size.py",
        "deleting expired entries from a cache dict inside a for loop over that same dict crashes",
    ),
    (
        "starter-asyncio-event-loop-closed",
        "event_loop_closed.py",
        "the second asyncio.run using the same client object fails, complaining the loop has been shut down",
    ),
    (
        "starter-asyncio-run-inside-running-loop",
        "asyncio_run_nested.py",
        "a sync helper that calls asyncio.run works from a script but fails when my async handler calls it",
    ),
    (
        "starter-collections-abc-removed-aliases",
        "collections_mapping_import.py",
        "after upgrading to Python 3.10 an old module fails to import Mapping from collections",
    ),
    (
        "starter-json-decode-empty-or-not-json",
        "json_decode_empty.py",
        "json.load on my cache file fails right at the first character; the file turns out to be empty",
    ),
    (
        "starter-json-decode-empty-or-not-json",
        None,
        "parsing the API response body as JSON fails because the server sent back an HTML error page",
    ),
    (
        "starter-subprocess-timeout-expired",
        "subprocess_timeout.py",
        "the git command I launch with subprocess.run hangs and gets killed when the time limit runs out",
    ),
    (
        "starter-str-concatenation-type",
        "str_concat_int.py",
        "building a status message with 'Processed: ' + count crashes because count is a number",
    ),
    (
        "starter-attribute-missing-on-object",
        "attribute_typo.py",
        "my User dataclass instance says it lacks the email field; I probably misspelled it",
    ),
    (
        "starter-object-not-callable",
        "builtin_shadowed_not_callable.py",
        "after I assigned a variable called list, calling list() on a generator stopped working",
    ),
    (
        "starter-compare-str-with-int",
        "compare_str_int.py",
        "checking whether the age typed into the form is below 18 fails with a type complaint",
    ),
)
