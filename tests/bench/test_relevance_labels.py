"""The relevance benchmark's labels and threshold rule, on small hand-made cases (no model).

The lenient label is a fixed rule: a skill whose template the failure's error line fits and that names its type
counts as relevant too; a query in words has only its lesson. The threshold keeps both kinds of query under the
absent-rate cap, and suggestions are ordered by the predictor, not by search order.
"""

from __future__ import annotations

from bench.relevance_eval import MAX_ABSENT_RATE, Predictor, choose_threshold, outcome, suggestions
from bench.relevance_set import Case, Hit, error_line_form, lenient_relevant
from bench.retrieval.evaluate import EvalQuery
from tests.conftest import make_skill

GENERIC = make_skill("generic", "Missing attribute", "AttributeError: '<type>' object has no attribute '<name>'")
OTHER_TYPE = make_skill("keyerror", "Missing key", "KeyError: '<name>'")
TRACEBACK = (
    'Traceback (most recent call last):\n  File "/srv/s.py", line 2, in total\n    return stock.iteritems()\n'
    "AttributeError: 'dict' object has no attribute 'iteritems'"
)


def query(text: str, kind: str = "traceback", expected: str = "lesson") -> EvalQuery:
    return EvalQuery(id="q", query=text, kind=kind, expected=expected)  # type: ignore[arg-type]


def test_the_lenient_label_adds_skills_whose_template_the_failure_fits_and_that_name_its_type() -> None:
    relevant = lenient_relevant(query(TRACEBACK), [GENERIC, OTHER_TYPE])
    assert relevant == {"lesson", "generic"}


def test_a_query_in_words_has_only_its_lesson_under_the_lenient_label() -> None:
    words = query("my dict has no iteritems any more", kind="description")
    assert lenient_relevant(words, [GENERIC, OTHER_TYPE]) == {"lesson"}


def test_the_run_tests_form_of_a_traceback_is_its_error_line() -> None:
    assert error_line_form(query(TRACEBACK)).query == "AttributeError: 'dict' object has no attribute 'iteritems'"
    words = query("a question in words", kind="description")
    assert error_line_form(words) == words


def hit(skill_id: str, label: int, value: float) -> Hit:
    return Hit(skill_id, label, score=1.0 - value, features={"v": value}, lenient=label)


VALUE = Predictor("v", lambda h: h.features["v"], lambda h: h.features["v"])


def case(kind: str, present: bool, *hits: Hit) -> Case:
    return Case(query("x", kind=kind), "hybrid", present, hits, present)


def test_suggestions_follow_the_predictor_not_the_search_order() -> None:
    c = case("traceback", True, hit("noise", 0, 0.3), hit("lesson", 1, 0.9))
    assert [h.skill_id for h in suggestions(c, VALUE, 0.2)] == ["lesson", "noise"]
    assert outcome([c], VALUE, 0.5).first_right == 1


def test_the_threshold_keeps_both_kinds_of_query_under_the_absent_cap() -> None:
    # Error-line cases alone would allow 0.31; the queries in words need more than 0.6.
    errors = [case("traceback", False, hit("a", 0, 0.3))] + [case("traceback", True, hit("l", 1, 0.9))] * 20
    words = [case("description", False, hit("b", 0, 0.6))] + [case("description", True, hit("l", 1, 0.8))] * 20
    assert choose_threshold(errors, VALUE) == 0.31
    chosen = choose_threshold(errors + words, VALUE)
    assert chosen == 0.61
    assert outcome(words, VALUE, chosen).absent_rate <= MAX_ABSENT_RATE
