# ruff: noqa: E501
"""What a fix teaches: not a deleted or weakened test, only its own edits, no user paths or names, no catch-all notes."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from skills_store.distill.attribution import attributed
from skills_store.distill.changes import summarise
from skills_store.distill.episodes import episodes
from skills_store.distill.heuristic import HeuristicDistiller
from skills_store.distill.names import Names
from skills_store.distill.screen import reason_to_refuse
from skills_store.models import EditRewrite

CALC = "def total(d):\n    s = 0\n    for k, v in d.iteritems():\n        s += v\n    return s\n"
TESTS = "from calc import total\n\n\ndef test_total():\n    assert total({'a': 1, 'b': 2}) == 3\n\n\ndef test_other():\n    assert 1 == 1\n"
ITERITEMS = (
    "AttributeError: 'dict' object has no attribute 'iteritems'\ndef test_total():\n>       assert total({'a': 1, 'b': 2}) == 3\n\n"
    "    def total(d):\n        s = 0\n>       for k, v in d.iteritems():\n"
    "E       AttributeError: 'dict' object has no attribute 'iteritems'\n\ncalc.py:3: AttributeError"
)


def _diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))


def _session(steps, failures: list[tuple[str, str]], changes: dict[str, tuple[str, str]], **fields):
    patch = "".join(_diff(path, old, new) for path, (old, new) in changes.items())
    return steps.trajectory(
        steps.run("failed", failures), steps.patch(patch, list(changes)), steps.run("passed"), **fields
    )


@pytest.mark.parametrize(
    "cheat",
    [
        TESTS.replace("def test_total():\n    assert total({'a': 1, 'b': 2}) == 3\n\n\n", ""),
        TESTS.replace("assert total({'a': 1, 'b': 2}) == 3", "assert True"),
        TESTS.replace("assert total({'a': 1, 'b': 2}) == 3", "total({'a': 1, 'b': 2})"),
        TESTS.replace("assert total({'a': 1, 'b': 2}) == 3", "assert total({'a': 1}) == 1"),
    ],
    ids=["test-deleted", "assert-true", "assert-removed", "only-tests-edited-for-a-code-failure"],
)
def test_a_fix_that_deletes_or_weakens_the_failing_test_teaches_nothing(steps, cheat: str) -> None:
    traj = _session(steps, [("test_calc.py::test_total", ITERITEMS)], {"test_calc.py": (TESTS, cheat)})
    assert HeuristicDistiller().distill([traj]) == []


def test_an_assertion_failure_fixed_by_rewriting_the_expectation_teaches_nothing(steps) -> None:
    test = "from shop import with_tax\n\n\ndef test_tax():\n    assert with_tax(100) == 125\n"
    message = "assert 120.0 == 125\n>       assert with_tax(100) == 125\nE       assert 120.0 == 125\n\ntest_shop.py:5: AssertionError"
    traj = _session(
        steps, [("test_shop.py::test_tax", message)], {"test_shop.py": (test, test.replace("125", "120.0"))}
    )
    assert HeuristicDistiller().distill([traj]) == []


def test_a_fix_of_the_tests_own_code_that_keeps_its_assertions_still_teaches(steps) -> None:
    test = (
        "import pytest\n\n\ndef test_rejects():\n    with pytest.raises(ValueError, message='bad'):\n        int('x')\n"
    )
    message = "TypeError: Unexpected keyword arguments passed to pytest.raises: message\n\ntests/test_p.py:5: TypeError"
    traj = _session(
        steps,
        [("tests/test_p.py::test_rejects", message)],
        {"tests/test_p.py": (test, test.replace(", message='bad'", ""))},
    )
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.rule


def test_a_test_only_fix_of_a_removed_unittest_alias_still_teaches(steps) -> None:
    test = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_sum(self):\n        self.assertEquals(sum([1, 2]), 3)\n"
    message = "AttributeError: 'T' object has no attribute 'assertEquals'\n\ntests/test_s.py:6: AttributeError"
    traj = _session(
        steps,
        [("tests/test_s.py::T::test_sum", message)],
        {"tests/test_s.py": (test, test.replace("assertEquals", "assertEqual"))},
    )
    [skill] = HeuristicDistiller().distill([traj])
    assert "rename `assertEquals` to `assertEqual`" in skill.strategy


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        (EditRewrite(before="assert <name>(<n>) == <n>", after=""), "weakens tests"),
        (EditRewrite(before="assert <name>(<n>) == <n>", after="<name>(<n>)"), "weakens tests"),
        (EditRewrite(before="", after="assert True"), "weakens tests"),
        (EditRewrite(before="def test_total():", after=""), "deletes tests"),
    ],
)
def test_screening_refuses_a_lesson_whose_rule_removes_assertions_or_tests(skill_factory, rule, reason) -> None:
    skill = skill_factory(
        "s", "AttributeError", "AttributeError: 'dict' object has no attribute 'iteritems'", "Rule: see it", rule=[rule]
    )
    found = reason_to_refuse(skill)
    assert found is not None
    assert found.startswith(reason)


def test_screening_keeps_a_rule_that_rewrites_an_assertion_into_another_assertion(skill_factory) -> None:
    rule = EditRewrite(before="self.assertEquals(...)", after="self.assertEqual(...)")
    skill = skill_factory(
        "s", "AttributeError", "AttributeError: 'X' object has no attribute 'assertEquals'", "Rule: it", rule=[rule]
    )
    assert reason_to_refuse(skill) is None


SHOP = "RATE = 0.2\n\n\ndef with_tax(price):\n    return price * (1 + RATE)\n\n\ndef total(items):\n    out = 0\n    for name, qty in items.iteritems():\n        out += qty\n    return out\n"
SHOP_FIXED = SHOP.replace("RATE = 0.2", "RATE = 0.25").replace(".iteritems()", ".items()")
TAX = "assert 120.0 == 125\n    def test_tax():\n>       assert with_tax(100) == 125\nE       assert 120.0 == 125\nE        +  where 120.0 = with_tax(100)\n\ntest_shop.py:5: AssertionError"
TOTAL = (
    "AttributeError: 'dict' object has no attribute 'iteritems'\n    def total(items):\n        out = 0\n>       for name, qty in items.iteritems():\n"
    "E       AttributeError: 'dict' object has no attribute 'iteritems'\n\nshop.py:10: AttributeError"
)


def test_one_patch_fixing_two_failures_gives_each_only_the_rule_of_its_own_edit(steps, tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP_FIXED)
    failures = [("test_shop.py::test_tax", TAX), ("test_shop.py::test_total", TOTAL)]
    traj = _session(steps, failures, {"shop.py": (SHOP, SHOP_FIXED)}, workspace=str(tmp_path))
    skills = HeuristicDistiller().distill([traj])
    assert [s.pattern for s in skills] == ["AttributeError: 'dict' object has no attribute 'iteritems'"]
    assert [(r.before, r.after) for r in skills[0].rule] == [("<mapping>.iteritems()", "<mapping>.items()")]


def test_a_failure_sharing_a_patch_keeps_only_the_blocks_its_traceback_names(steps) -> None:
    app = "def total(items):\n    return sum(i.price for i in itemz)\n\n\ndef count(d):\n    return len(list(d.iteritems()))\n"
    fixed = app.replace("in itemz", "in items").replace("d.iteritems()", "d.items()")
    typo = "NameError: name 'itemz' is not defined\n    def total(items):\n>       return sum(i.price for i in itemz)\nE       NameError: name 'itemz' is not defined\n\napp.py:2: NameError"
    count = "AttributeError: 'dict' object has no attribute 'iteritems'\n    def count(d):\n>       return len(list(d.iteritems()))\nE       AttributeError: 'dict' object has no attribute 'iteritems'\n\napp.py:6: AttributeError"
    traj = _session(steps, [("t.py::test_total", typo), ("t.py::test_count", count)], {"app.py": (app, fixed)})
    skills = {s.pattern.split(":")[0]: s for s in HeuristicDistiller().distill([traj])}
    assert "iteritems" not in skills["NameError"].strategy
    assert "itemz" in skills["NameError"].strategy
    assert [(r.before, r.after) for r in skills["AttributeError"].rule] == [
        ("<mapping>.iteritems()", "<mapping>.items()")
    ]


def test_a_one_off_value_fix_behind_a_template_that_fits_every_assertion_is_no_skill(steps) -> None:
    src = "RATE = 0.2\n\n\ndef with_tax(price):\n    return price * (1 + RATE)\n"
    traj = _session(steps, [("test_shop.py::test_tax", TAX)], {"shop.py": (src, src.replace("0.2", "0.25"))})
    assert HeuristicDistiller().distill([traj]) == []


def test_a_case_note_whose_pattern_keeps_words_to_recognise_it_by_is_still_made(steps) -> None:
    src = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    fixed = "def mean(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"
    message = "ZeroDivisionError: division by zero\n>       return sum(xs) / len(xs)\nE       ZeroDivisionError: division by zero\n\nstats.py:2: ZeroDivisionError"
    traj = _session(steps, [("t.py::test_mean", message)], {"stats.py": (src, fixed)})
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.pattern == "ZeroDivisionError: division by zero"


def test_absolute_paths_quoted_in_a_skill_become_relative_or_a_placeholder(steps, tmp_path: Path) -> None:
    ws = tmp_path / ("alice-private-client-" + "x" * 60)  # a long workspace path: the quote is cut after it goes
    ws.mkdir()
    secret = "/home/alice/acme-secret-project/config/settings.json"
    src = f"import json\n\n\ndef load():\n    with open({secret!r}) as f:\n        return json.load(f)\n"
    message = f"FileNotFoundError: [Errno 2] No such file or directory: '{secret}'\nE       FileNotFoundError: [Errno 2] No such file or directory: '{secret}'\n\n{ws}/cfg.py:5: FileNotFoundError"
    importing = f"ImportError: cannot import name 'parse_line' from 'helpers' ({ws}/helpers.py)\nE   ImportError: cannot import name 'parse_line' from 'helpers' ({ws}/helpers.py)"
    app = "from helpers import parse_line\n\n\ndef run(r):\n    return parse_line(r).upper()\n"
    first = _session(
        steps,
        [("test_cfg.py::test_load", message)],
        {"cfg.py": (src, src.replace(secret, "settings.json"))},
        workspace=str(ws),
    )
    second = _session(
        steps,
        [("test_app.py", importing)],
        {"app.py": (app, app.replace("parse_line(r).upper()", "parse_line(r)"))},
        tid="traj-2",
        workspace=str(ws),
    )
    skills = HeuristicDistiller().distill([first, second])
    assert len(skills) == 2
    for skill in skills:
        assert "/home/alice" not in skill.strategy
        assert str(ws) not in skill.strategy
    assert "'<path>'" in skills[0].strategy
    assert "(helpers.py)" in skills[1].strategy


def test_a_module_that_is_a_file_of_the_workspace_is_the_users_even_when_not_edited(steps, tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("def parse_row(r):\n    return r.split(',')\n")
    app = "from helpers import parse_line\n\n\ndef run(r):\n    return parse_line(r)\n"
    (tmp_path / "app.py").write_text(app.replace("parse_line", "parse_row"))
    message = f"ImportError: cannot import name 'parse_line' from 'helpers' ({tmp_path}/helpers.py)\nE   ImportError: cannot import name 'parse_line' from 'helpers' ({tmp_path}/helpers.py)"
    traj = _session(
        steps,
        [("test_app.py", message)],
        {"app.py": (app, app.replace("parse_line", "parse_row"))},
        workspace=str(tmp_path),
    )
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.pattern == "ImportError: cannot import name '<name>' from '<name>' (<path>)"
    assert skill.rule == []
    assert "parse_line" not in skill.title


def test_a_failure_is_credited_with_the_value_its_traceback_function_reads_not_with_other_blocks(
    steps, tmp_path: Path
) -> None:
    (tmp_path / "shop.py").write_text(SHOP_FIXED)
    traj = _session(steps, [("test_shop.py::test_tax", TAX)], {"shop.py": (SHOP, SHOP_FIXED)}, workspace=str(tmp_path))
    [fix], _ = episodes(traj)
    own = attributed(fix.failure, summarise(fix.edits), str(tmp_path))
    assert own is not None
    assert own.files[0].removed == ["RATE = 0.2"]
    assert attributed(fix.failure, summarise(fix.edits), None) is None


def test_a_module_named_by_an_absolute_traceback_path_inside_the_workspace_is_the_users() -> None:
    names = Names()
    names.add_failure_text(
        "ImportError: cannot import name 'parse_line' from 'helpers' (/gone/ws/helpers.py)", "/gone/ws"
    )
    names.add_failure_text('  File "/usr/lib/python3.11/json/__init__.py", line 3', "/gone/ws")
    assert names.finish().user_modules == {"helpers"}
