"""Query analysis: the signal of a traceback or pytest log is what gets embedded and keyword-matched."""

from __future__ import annotations

from skills_store.search.query import analyze, fts_match_expression, tokens

CHAINED = """Traceback (most recent call last):
  File "/srv/app/db.py", line 10, in load
    row = rows[0]
IndexError: list index out of range

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/app/main.py", line 4, in <module>
    from collections import Mapping
ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/python3.11/collections/__init__.py)
"""

PYTEST = """
    def test_total():
>       assert total([1, 2]) == 4
E       AssertionError: assert 3 == 4
E        +  where 3 = total([1, 2])

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_total - AssertionError: assert 3 == 4
"""


def test_the_last_raised_exception_comes_first() -> None:
    parts = analyze(CHAINED)
    assert parts.error_lines[0].startswith("ImportError: cannot import name 'Mapping' from 'collections'")
    assert parts.error_lines[1] == "IndexError: list index out of range"
    assert parts.error_type == "ImportError"


def test_the_raising_source_line_is_kept_and_the_noise_dropped() -> None:
    parts = analyze(CHAINED)
    assert parts.code_line == "from collections import Mapping"
    assert "Traceback" not in parts.embed_text
    assert "from collections import Mapping" in parts.embed_text
    assert {"importerror", "mapping", "collections"} <= set(parts.keywords)
    assert "traceback" not in parts.keywords
    assert "line" not in parts.keywords


def test_pytest_failure_lines_are_recognised() -> None:
    parts = analyze(PYTEST)
    assert parts.error_lines[0] == "AssertionError: assert 3 == 4"
    assert parts.error_type == "AssertionError"


def test_a_description_in_words_is_used_as_it_is() -> None:
    text = "my tests hang forever when the event loop gets closed twice"
    parts = analyze(text)
    assert parts.error_lines == []
    assert parts.embed_text == text
    assert parts.keywords[:3] == ["tests", "hang", "forever"]


def test_tokens_drop_stopwords_and_duplicates() -> None:
    assert tokens("The module and THE Module and __init__") == ["module", "__init__"]


def test_fts_expression_quotes_every_keyword_so_operators_stay_words() -> None:
    assert fts_match_expression(["and", 'say"hi', "near"]) == '"and" OR "say""hi" OR "near"'
    assert fts_match_expression([]) is None
