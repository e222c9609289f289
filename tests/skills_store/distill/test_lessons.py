# ruff: noqa: E501
"""Lessons, not case notes: signatures keep the library's names, rules are learned from the patch, copies merge."""

from __future__ import annotations

import pytest

from skills_store.distill import lesson
from skills_store.distill.heuristic import HeuristicDistiller
from skills_store.distill.merge import merge_into_bank
from skills_store.distill.names import Names
from skills_store.distill.rules import rewrites
from skills_store.distill.signature import from_error_line


def _patch(path: str, old: str, new: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,2 @@\n def f(x):\n-    {old}\n+    {new}\n"


def _fix(steps, tid: str, repo: str, path: str, error: str, old: str, new: str):
    message = f"{error}\n>       {old}\nE       {error}\n\n{path}:2: {error.split(':')[0]}"
    return steps.trajectory(
        steps.run("failed", [(f"tests/test_{path}::test_it", message)]),
        steps.patch(_patch(path, old, new), [path]),
        steps.run("passed"),
        tid=tid,
        repo=repo,
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "AttributeError: module 'collections' has no attribute 'Mapping'",
            "module 'collections' has no attribute '<ABC>'",
        ),
        (
            "AttributeError: module 'collections' has no attribute 'Iterable'",
            "module 'collections' has no attribute '<ABC>'",
        ),
        ("AttributeError: module 'time' has no attribute 'clock'", "module 'time' has no attribute 'clock'"),
        (
            "AttributeError: module 'inspect' has no attribute 'getargspec'",
            "module 'inspect' has no attribute 'getargspec'",
        ),
        ("AttributeError: 'dict' object has no attribute 'iteritems'", "'dict' object has no attribute 'iteritems'"),
        ("AttributeError: 'Cart' object has no attribute 'totl'", "'<name>' object has no attribute '<name>'"),
        ("NameError: name 'unicode' is not defined", "name 'unicode' is not defined"),
        ("NameError: name 'itemz' is not defined", "name '<name>' is not defined"),
        ("KeyError: 'id'", "'<name>'"),
    ],
)
def test_a_signature_keeps_the_names_that_are_not_the_users_own(line: str, expected: str) -> None:
    signature = from_error_line(line)
    assert signature is not None
    assert signature.message == expected


def test_the_users_own_module_and_functions_become_placeholders() -> None:
    names = Names(user={"parse"}, user_modules={"shop"})
    assert from_error_line("ImportError: cannot import name 'Cart' from 'shop'", names=names).message == (
        "cannot import name '<name>' from '<name>'"
    )
    assert from_error_line("TypeError: parse() got an unexpected keyword argument 'strict'", names=names).message == (
        "<name>() got an unexpected keyword argument '<name>'"
    )
    assert from_error_line(
        "TypeError: JSONDecoder.__init__() got an unexpected keyword argument 'encoding'"
    ).message == ("JSONDecoder.__init__() got an unexpected keyword argument 'encoding'")


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("t0 = time.clock()", "t0 = time.perf_counter()", "time.clock() -> time.perf_counter()"),
        ("return sum(v for _, v in stock.iteritems())", "return sum(v for _, v in stock.items())",
         "<mapping>.iteritems() -> <mapping>.items()"),
        ("if isinstance(x, collections.Mapping):", "if isinstance(x, collections.abc.Mapping):",
         "collections.<ABC> -> collections.abc.<ABC>"),
        ("if roles.has_key(user):", "if user in roles:", "<mapping>.has_key(<name>) -> <name> in <mapping>"),
        ("spec = inspect.getargspec(self.handler)", "spec = inspect.getfullargspec(self.handler)",
         "inspect.getargspec(...) -> inspect.getfullargspec(...)"),
        ("data = json.loads(raw, encoding='utf-8')", "data = json.loads(raw)", "json.loads(..., encoding=<str>) -> json.loads(...)"),
        ("return asyncio.run(main)", "return asyncio.run(main())", "asyncio.run(...) -> asyncio.run(...())"),
        ("print 'hello', name", "print('hello', name)", "print ... -> print(...)"),
        ("@asyncio.coroutine", "", "@asyncio.coroutine -> (nothing)"),
    ],
)  # fmt: skip
def test_the_rule_is_the_abstract_rewrite_of_the_changed_tokens(old: str, new: str, rule: str) -> None:
    names = Names(user={"t0", "stock", "v", "x", "roles", "user", "handler", "data", "raw", "main", "name"})
    [found] = rewrites(old, new, names)
    assert found.text == rule
    assert found.is_rule


def test_a_renamed_typo_is_no_rule() -> None:
    [found] = rewrites("return sum(i.price for i in itms)", "return sum(i.price for i in items)", Names(user={"items"}))
    assert not found.is_rule


def test_the_strategy_leads_with_the_rule_then_why_then_the_example_with_its_source(steps) -> None:
    traj = _fix(steps, "t1", "acme/bench", "stopwatch.py", "AttributeError: module 'time' has no attribute 'clock'",
                "return time.clock() - start", "return time.perf_counter() - start")  # fmt: skip
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.pattern == "AttributeError: module 'time' has no attribute 'clock'"
    assert skill.title == "AttributeError: replace `time.clock()` with `time.perf_counter()`"
    lines = skill.strategy.splitlines()
    assert lines[0] == "Rule: `time.clock()` -> `time.perf_counter()`"
    assert lines[1].startswith("Why: ")
    assert lines[3] == "- `return time.clock() - start` -> `return time.perf_counter() - start` in `stopwatch.py` (t1)"
    assert [(r.before, r.after) for r in skill.rule] == [("time.clock()", "time.perf_counter()")]
    assert lesson.lesson_tag_of(skill) is not None


def test_one_lesson_met_in_two_repos_merges_and_another_rule_stays_apart(hash_bank, steps) -> None:
    error = "AttributeError: 'dict' object has no attribute 'iteritems'"
    a = _fix(steps, "t1", "acme/shop", "stock.py", error, "return sum(stock.iteritems())", "return sum(stock.items())")
    b = _fix(
        steps, "t2", "zed/grades", "report.py", error, "for k, v in scores.iteritems():", "for k, v in scores.items():"
    )
    c = _fix(steps, "t3", "acme/auth", "auth.py", "AttributeError: 'dict' object has no attribute 'has_key'",
             "if roles.has_key(user):", "if user in roles:")  # fmt: skip
    drafts = HeuristicDistiller().distill([a, b, c])
    report = merge_into_bank(hash_bank, drafts[:1])
    report = merge_into_bank(hash_bank, drafts[1:])
    assert len(report.merged) == 1
    skills = {s.pattern: s for s in hash_bank.list_skills()}
    merged = skills[error]
    assert merged.sources == ["t1", "t2"]
    assert merged.repo is None
    assert merged.prior == pytest.approx(0.75)  # 0.70 each, +0.05 for the second session that confirmed the rule
    assert len(lesson.examples_of(merged.strategy)) == 2
    assert skills["AttributeError: 'dict' object has no attribute 'has_key'"].sources == ["t3"]


def test_dedupe_merges_stored_copies_of_one_lesson_and_keeps_other_rules_apart(hash_bank, steps) -> None:
    from skills_store.distill.merge import dedupe_bank

    error = "AttributeError: module 'time' has no attribute 'clock'"
    a = _fix(steps, "t1", "acme/a", "a.py", error, "return time.clock()", "return time.perf_counter()")
    b = _fix(steps, "t2", "zed/b", "b.py", error, "t = time.clock() + 1", "t = time.perf_counter() + 1")
    c = _fix(steps, "t3", "acme/c", "c.py", error, "return time.clock()", "return time.monotonic()")
    hash_bank.upsert(HeuristicDistiller().distill([a, b, c]))  # stored side by side, as an older version would
    assert hash_bank.count() == 3
    report = dedupe_bank(hash_bank)
    assert len(report.merged) == 1
    by_rule = {s.rule[0].after: s.sources for s in hash_bank.list_skills()}
    assert sorted(by_rule["time.perf_counter()"]) == ["t1", "t2"]
    assert by_rule["time.monotonic()"] == ["t3"]


def test_a_module_the_traceback_imports_is_kept_though_it_is_not_installed(steps) -> None:
    error = "ModuleNotFoundError: No module named 'pkg_legacy'"
    message = f"{error}\ntests/test_v.py:1: in <module>\n    from about import v\nabout.py:1: in <module>\n>   import pkg_legacy\nE   {error}"
    patch = "--- a/requirements.txt\n+++ b/requirements.txt\n@@ -1 +1,2 @@\n pytest\n+pkg-legacy==1.0\n"
    traj = steps.trajectory(
        steps.run("error", [("tests/test_v.py", message)]),
        steps.patch(patch, ["requirements.txt"]),
        steps.run("passed"),
    )
    names = lesson.trajectory_names(traj)
    assert "pkg_legacy" in names.imported
    assert "about" in names.user_modules
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.pattern == error


def test_a_library_class_is_kept_once_the_users_files_were_read_and_do_not_define_it() -> None:
    line = "AttributeError: 'Thread' object has no attribute 'isAlive'"
    assert from_error_line(line).message == "'<name>' object has no attribute '<name>'"  # nothing read: unsure
    read = Names(user={"Worker"}, read_files=True)
    assert from_error_line(line, names=read).message == "'Thread' object has no attribute 'isAlive'"
    own = "AttributeError: 'Worker' object has no attribute 'isAlive'"
    assert from_error_line(own, names=read).message == "'<name>' object has no attribute '<name>'"
