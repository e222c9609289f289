# ruff: noqa: E501
"""A fix counts only as far as the session's runs show it: no "the whole suite passed" after a failing run, and no
lesson from an edit the session's last whole-suite run still contradicts."""

from __future__ import annotations

import difflib

from skills_store.distill.heuristic import HeuristicDistiller

SHOP = "def price(item):\n    return item['cost'] * 2 + item['vatt']\n"
SWALLOW = "def price(item):\n    try:\n        return item['cost'] * 2 + item['vatt']\n    except Exception:\n        return 5\n"
GET = "def price(item):\n    return item['cost'] * 2 + item.get('vatt', 0)\n"
VATT = "KeyError: 'vatt'\n    def price(item):\n>       return item['cost'] * 2 + item['vatt']\nE       KeyError: 'vatt'\n\nshop.py:2: KeyError"
ASSERT_5 = "AssertionError: assert 5 == 2\n>       assert price({'cost': 1}) == 2\nE       assert 5 == 2\n\ntest_shop.py:7: AssertionError"
OTHER = "ValueError: bad value\n\nother.py:20: ValueError"
PRICE, OTHER_TEST = "test_shop.py::test_price", "test_shop.py::test_other"


def _patch(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/shop.py", "b/shop.py"))


def _lessons(skills):
    return [s for s in skills if "pitfall" not in s.tags]


def test_an_edit_after_which_the_last_whole_suite_run_still_fails_with_the_same_tests_gives_no_lesson(steps) -> None:
    # The finding: the swallowing `except` removes the KeyError from one test, the other now fails its assertion.
    traj = steps.trajectory(
        steps.run("failed", [(PRICE, VATT), (OTHER_TEST, VATT)]),
        steps.patch(_patch(SHOP, SWALLOW), ["shop.py"]),
        steps.run("failed", [(OTHER_TEST, ASSERT_5)]),
        outcome="failure",
    )
    skills = HeuristicDistiller().distill([traj])
    assert _lessons(skills) == []
    assert all("passed afterwards" not in s.strategy for s in skills)


def test_an_edit_that_breaks_another_test_gives_no_lesson(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [(PRICE, VATT)]),
        steps.patch(_patch(SHOP, SWALLOW), ["shop.py"]),
        steps.run("failed", [(OTHER_TEST, ASSERT_5)]),
        outcome="failure",
    )
    assert _lessons(HeuristicDistiller().distill([traj])) == []


def test_a_fix_undone_before_the_last_whole_suite_run_gives_no_lesson(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [(PRICE, VATT)]),
        steps.patch(_patch(SHOP, GET), ["shop.py"]),
        steps.run("passed"),
        steps.patch(_patch(GET, SHOP), ["shop.py"]),
        steps.run("failed", [(PRICE, VATT)]),
        outcome="failure",
    )
    assert _lessons(HeuristicDistiller().distill([traj])) == []


def test_a_fix_confirmed_by_a_run_that_still_failed_elsewhere_says_so_and_not_that_the_suite_passed(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [(PRICE, VATT), ("test_other.py::test_x", OTHER)]),
        steps.patch(_patch(SHOP, GET), ["shop.py"]),
        steps.run("failed", [("test_other.py::test_x", OTHER)]),
    )
    [skill] = _lessons(HeuristicDistiller().distill([traj]))
    assert skill.rule
    assert "passed" not in skill.strategy
    assert (
        "the next run of the whole test suite no longer reported it (1 other failing test(s) remained)."
        in skill.strategy
    )


def test_a_fix_whose_suite_passed_later_says_both(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [(PRICE, VATT), ("test_other.py::test_x", OTHER)]),
        steps.patch(_patch(SHOP, GET), ["shop.py"]),
        steps.run("failed", [("test_other.py::test_x", OTHER)]),
        steps.patch("--- a/other.py\n+++ b/other.py\n@@\n-x = 1\n+x = 2\n", ["other.py"]),
        steps.run("passed"),
    )
    skills = HeuristicDistiller().distill([traj])
    [skill] = [s for s in _lessons(skills) if s.pattern.startswith("KeyError")]
    assert (
        "no longer reported it (1 other failing test(s) remained), and the whole test suite passed later in the session"
        in skill.strategy
    )


def test_a_rule_lesson_confirmed_by_a_failing_run_does_not_claim_the_suite_passed(steps) -> None:
    key = "KeyError: 'user_id'\n    return payload['user_id']\nE   KeyError: 'user_id'\n\napi.py:7: KeyError"
    get = "--- a/api.py\n+++ b/api.py\n@@ -5,3 +5,3 @@ def handler(payload):\n def handler(payload):\n-    return payload['user_id']\n+    return payload.get('user_id')\n"
    other = ("tests/test_api.py::test_other", OTHER)
    traj = steps.trajectory(
        steps.run("failed", [("tests/test_api.py::test_handler", key), other]),
        steps.patch(get, ["api.py"]),
        steps.run("failed", [other]),
    )
    [skill] = [s for s in HeuristicDistiller().distill([traj]) if s.rule]
    assert "the whole test suite passed" not in skill.strategy
    assert (
        "the next run of the whole test suite no longer reported it (1 other failing test(s) remained)"
        in skill.strategy
    )


def test_a_fix_confirmed_by_a_passing_whole_suite_still_says_it_passed(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [(PRICE, VATT)]), steps.patch(_patch(SHOP, GET), ["shop.py"]), steps.run("passed")
    )
    [skill] = HeuristicDistiller().distill([traj])
    assert "the whole test suite passed afterwards." in skill.strategy
    assert skill.prior == 0.7


def test_a_case_note_confirmed_by_a_run_that_still_failed_elsewhere_says_what_the_run_showed(steps) -> None:
    typo = "NameError: name 'itemz' is not defined\n    def total(items):\n>       return sum(i.price for i in itemz)\nE       NameError: name 'itemz' is not defined\n\nshop.py:2: NameError"
    patch = "--- a/shop.py\n+++ b/shop.py\n@@ -1,3 +1,3 @@\n def total(items):\n-    return sum(i.price for i in itemz)\n+    return sum(i.price for i in items)\n"
    other = ("test_other.py::test_x", OTHER)
    traj = steps.trajectory(
        steps.run("failed", [("tests/test_shop.py::test_total", typo), other]),
        steps.patch(patch, ["shop.py"]),
        steps.run("failed", [other]),
    )
    [skill] = [s for s in HeuristicDistiller().distill([traj]) if s.pattern.startswith("NameError")]
    assert "passing" not in skill.strategy
    assert (
        "confirmed by the whole test suite no longer reporting it (1 other failing test(s) remained)" in skill.strategy
    )


def test_a_fix_the_whole_suite_confirmed_survives_a_later_unrelated_failure(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [(PRICE, VATT)]),
        steps.patch(_patch(SHOP, GET), ["shop.py"]),
        steps.run("passed"),
        steps.patch("--- a/other.py\n+++ b/other.py\n@@\n-x = 1\n+x = 2\n", ["other.py"]),
        steps.run("failed", [("test_other.py::test_new", OTHER)]),
        outcome="failure",
    )
    [skill] = _lessons(HeuristicDistiller().distill([traj]))
    assert skill.rule
    assert "the whole test suite passed afterwards." in skill.strategy


def test_a_pitfall_whose_error_changed_says_what_the_last_run_reported(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [(PRICE, VATT), (OTHER_TEST, VATT)]),
        steps.patch(_patch(SHOP, SWALLOW), ["shop.py"]),
        steps.run("failed", [(OTHER_TEST, ASSERT_5)]),
        outcome="failure",
    )
    [pitfall] = HeuristicDistiller().distill([traj])
    assert "pitfall" in pitfall.tags
    assert "came back" not in pitfall.strategy
    assert "kept failing in 2 test runs" in pitfall.strategy
    assert "the last run reported `AssertionError: assert 5 == 2` instead" in pitfall.strategy
