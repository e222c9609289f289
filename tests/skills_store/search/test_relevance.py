"""Calibrated relevance: the signature features, the model, and the hook's keyword-only cut on the starter pack."""

from __future__ import annotations

import math

import pytest

from skills_store.bank import SkillBank
from skills_store.errors import ConfigError
from skills_store.models import EditRewrite
from skills_store.search.keyword import quick_search
from skills_store.search.query import analyze
from skills_store.search.relevance import (
    RelevanceModel,
    Signature,
    default_threshold,
    signature_features,
    suggest_threshold,
)
from skills_store.starter import load_starter_pack

KEY_SKILL = {"title": "Missing key", "pattern": "KeyError: '<name>'", "strategy": "Use .get."}
CALL_SKILL = {
    "title": "Calling something that is not a function",
    "pattern": "TypeError: '<str|list|dict|int|module>' object is not callable",
    "strategy": "Rename the variable that shadows the builtin.",
}
INDEX_TRACEBACK = (
    'Traceback (most recent call last):\n  File "/srv/app/logs.py", line 8, in <module>\n    newest = logs[-1]\n'
    "IndexError: list index out of range"
)


def features(query: str, skill_factory, fields: dict[str, str]) -> dict[str, float]:
    return signature_features(Signature.of(analyze(query)), skill_factory("sk", **fields))


def test_a_failure_that_fits_the_patterns_template_matches_its_signature(skill_factory) -> None:
    f = features("KeyError: 'qty'", skill_factory, KEY_SKILL)
    assert (f["signature"], f["type_match"], f["type_other"], f["template"]) == (1.0, 1.0, 0.0, 1.0)


def test_a_pattern_of_another_exception_type_is_a_mismatch(skill_factory) -> None:
    f = features("KeyError: 'qty'", skill_factory, CALL_SKILL)
    assert (f["signature"], f["type_match"], f["type_other"]) == (0.0, 0.0, 1.0)


def test_a_query_in_words_has_no_signature_to_agree_with(skill_factory) -> None:
    f = features("my dict lookup fails for some rows", skill_factory, KEY_SKILL)
    assert set(f.values()) == {0.0}


def test_a_bare_pytest_assert_is_read_as_an_assertion_error(skill_factory) -> None:
    failure = "test_calc.py::test_add: assert -1 == 5\nE       assert -1 == 5\n\ntest_calc.py:5: AssertionError"
    skill = {"title": "Operator swapped", "pattern": "AssertionError: assert <n> == <n>", "strategy": "Check it."}
    f = features(failure, skill_factory, skill)
    assert (f["signature"], f["type_match"], f["template"]) == (1.0, 1.0, 1.0)


def test_the_suggestion_threshold_is_the_fitted_one_unless_the_setting_names_another() -> None:
    assert suggest_threshold({}) == default_threshold()
    assert suggest_threshold({"SKILLBANK_SUGGEST_THRESHOLD": "0.4"}) == 0.4
    for bad in ("high", "1.5"):
        with pytest.raises(ConfigError, match="SKILLBANK_SUGGEST_THRESHOLD"):
            suggest_threshold({"SKILLBANK_SUGGEST_THRESHOLD": bad})


def test_the_model_is_a_probability_that_grows_with_a_positive_weight() -> None:
    model = RelevanceModel({"signature": 2.0, "cosine": 1.0}, -3.0)
    low, high = model.predict({"cosine": 0.1}), model.predict({"signature": 1.0, "cosine": 0.9})
    assert 0.0 < low < high < 1.0
    assert model.predict({"signature": 1.0}) == 1 / (1 + math.exp(1.0))
    assert RelevanceModel({"x": 1.0}, -100.0).predict({}) == 0.0


def test_the_hook_suggests_the_index_lesson_and_nothing_for_the_demos_key_errors(hash_bank: SkillBank) -> None:
    hash_bank.upsert(load_starter_pack())
    hash_bank.flush()
    home, cut = hash_bank.catalog.path.parent, default_threshold()
    assert [s.skill_id for s in quick_search(home, INDEX_TRACEBACK, 3, threshold=cut)][:1] == [
        "starter-indexerror-list-out-of-range"
    ]
    for failure in ("KeyError: 'price'", "KeyError: 'qty'"):
        titles = [s.title for s in quick_search(home, failure, 3, threshold=cut)]
        assert not any("not a function" in t or "floating-point" in t for t in titles), titles
    assert quick_search(home, "a question about gardening", 3, threshold=cut) == []


@pytest.mark.parametrize(
    ("failure", "pattern"),
    [
        # a parenthetical note of the pattern may be there or not, whatever it says
        ("ZeroDivisionError: division by zero", "ZeroDivisionError: division by zero (float division by zero)"),
        (
            'TypeError: can only concatenate str (not "int") to str',
            'TypeError: can only concatenate str (not "int") to str / unsupported operand type(s) for +',
        ),
        # an alternative without a type takes the previous one's; `-- or` starts an alternative at its type
        (
            "TypeError: send() missing 1 required positional argument: 'body'",
            "TypeError: <f>() takes N positional arguments but M were given / <f>() missing 1 required "
            "positional argument: '<name>'",
        ),
        (
            "AttributeError: cannot access submodule 'inv' of module 'billing'",
            "ImportError: cannot import name '<name>' -- or AttributeError: cannot access submodule '<s>' of "
            "module '<p>'",
        ),
        # the failure's message is the template cut at a word
        ("SyntaxError: invalid syntax", "SyntaxError: invalid syntax at a walrus `:=` (3.8+)"),
        # text before the exception type is not part of the template
        ("AssertionError: assert 3 == 4", "pytest FAILED ... AssertionError: assert <left> == <right>"),
    ],
)
def test_a_failure_fits_the_templates_a_pattern_writes_in_its_usual_shorthands(
    skill_factory, failure: str, pattern: str
) -> None:
    assert features(failure, skill_factory, {"title": "t", "pattern": pattern, "strategy": "s"})["signature"] == 1.0


def test_a_placeholder_that_lists_its_choices_fits_only_those(skill_factory) -> None:
    shadow = {"title": "t", "pattern": "AttributeError: module '<json|random>' has no attribute '<f>'", "strategy": "s"}
    assert features("AttributeError: module 'json' has no attribute 'loads'", skill_factory, shadow)["signature"] == 1
    assert features("AttributeError: module 'time' has no attribute 'clock'", skill_factory, shadow)["signature"] == 0


def test_a_message_typed_without_quotes_fits_a_template_that_quotes(skill_factory) -> None:
    module = {"title": "t", "pattern": "ModuleNotFoundError: No module named '<module>'", "strategy": "s"}
    assert features("ModuleNotFoundError: No module named yaml", skill_factory, module)["signature"] == 1.0
    assert features("KeyError: user_id", skill_factory, KEY_SKILL)["signature"] == 1.0
    shadow = {"title": "t", "pattern": "AttributeError: module '<json|random>' has no attribute '<f>'", "strategy": "s"}
    assert features("AttributeError: module json has no attribute loads", skill_factory, shadow)["signature"] == 1.0
    assert features("AttributeError: module time has no attribute clock", skill_factory, shadow)["signature"] == 0.0
    # A line that quotes is taken as written: its quotes must be where the template has them.
    assert features("AttributeError: module 'json has no attribute loads", skill_factory, shadow)["signature"] == 0.0


def test_a_one_word_message_does_not_fit_a_longer_template_by_its_prefix(skill_factory) -> None:
    skill = {"title": "t", "pattern": "ValueError: invalid literal for int() with base 10", "strategy": "s"}
    assert features("ValueError: invalid", skill_factory, skill)["signature"] == 0.0


def test_the_skills_edit_rule_agrees_when_the_failure_names_what_it_rewrites(skill_factory) -> None:
    rule = [EditRewrite(before="<mapping>.iteritems()", after="<mapping>.items()")]
    skill = {"title": "t", "pattern": "AttributeError: 'dict' object has no attribute 'iteritems'", "strategy": "s"}
    lesson = skill_factory("sk", **skill, rule=rule)
    sig = Signature.of(analyze("AttributeError: 'dict' object has no attribute 'iteritems'"))
    assert signature_features(sig, lesson)["rule"] == 1.0
    assert signature_features(Signature.of(analyze("KeyError: 'qty'")), lesson)["rule"] == 0.0
    assert signature_features(sig, skill_factory("no-rule", **skill))["rule"] == 0.0


def test_the_exception_type_agrees_with_any_error_line_of_the_failure(skill_factory) -> None:
    failure = (
        "RuntimeWarning: coroutine 'fetch' was never awaited\n"
        "RuntimeError: asyncio.run() cannot be called from a running event loop"
    )
    skill = {"title": "t", "pattern": "RuntimeError: asyncio.run() cannot be called from a running event loop"}
    f = features(failure, skill_factory, {**skill, "strategy": "s"})
    assert (f["signature"], f["type_match"], f["type_other"]) == (1.0, 1.0, 0.0)
