"""An edit rule holds the changed part only: an unchanged call chained after it, or the user's owner chain before
its owner, is not part of the edit, so the same fix followed by another call is the same lesson and earns credit."""

from __future__ import annotations

import pytest

from skills_store.distill import lesson
from skills_store.distill.credit import applied_rule
from skills_store.distill.heuristic import HeuristicDistiller
from skills_store.distill.names import Names
from skills_store.distill.rules import rewrites

NAMES = Names(user={"s", "raw_name", "self", "data", "cfg", "x", "d", "a", "b", "line", "parts", "items"})


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("return s.decode('utf-8').strip()", "return s.strip()", "<name>.decode(<str>) -> <name>"),
        ("return raw_name.decode('utf-8').lower()", "return raw_name.lower()", "<name>.decode(<str>) -> <name>"),
        ("x = s.decode('utf-8').strip().lower()", "x = s.strip().lower()", "<name>.decode(<str>) -> <name>"),
        ("x = s.decode('utf-8').split(',')[0]", "x = s.split(',')[0]", "<name>.decode(<str>) -> <name>"),
        ("return self.data.decode('utf-8').strip()", "return self.data.strip()", "<name>.decode(<str>) -> <name>"),
        ("y = cfg.items.iteritems()", "y = cfg.items.items()", "<mapping>.iteritems() -> <mapping>.items()"),
        ("return d.iteritems().next()", "return d.items().next()", "<mapping>.iteritems() -> <mapping>.items()"),
        ("return s.strip().strip()", "return s.strip()", "<name>.strip() -> <name>"),
        # the owner of the edited link is a call: it stays whole (never a rule that starts with `)`)
        ("x = s.strip().decode('utf-8')", "x = s.strip()", "<name>.strip().decode(<str>) -> <name>.strip()"),
        # library owners and names after an inserted module path stay
        (
            "return os.path.join(a, b).decode('utf-8').strip()",
            "return os.path.join(a, b).strip()",
            "os.path.join(...).decode(<str>) -> os.path.join(...)",
        ),
        (
            "if isinstance(x, collections.Mapping):",
            "if isinstance(x, collections.abc.Mapping):",
            "collections.<ABC> -> collections.abc.<ABC>",
        ),
        ("start = time.clock()", "start = time.perf_counter()", "time.clock() -> time.perf_counter()"),
        (
            "return json.loads(s, encoding='utf-8').get('a')",
            "return json.loads(s).get('a')",
            "json.loads(..., encoding=<str>) -> json.loads(...)",
        ),
    ],
)
def test_the_rule_leaves_out_what_both_sides_share(old: str, new: str, rule: str) -> None:
    [found] = rewrites(old, new, NAMES)
    assert found.text == rule


DECODE = "AttributeError: 'str' object has no attribute 'decode'"


def _decode_fix(steps, module: str, func: str, var: str, then: str, tid: str, *extra):
    old, new = f"    return {var}.decode('utf-8').{then}()", f"    return {var}.{then}()"
    patch = f"--- a/{module}.py\n+++ b/{module}.py\n@@ -1,2 +1,2 @@\n def {func}({var}):\n-{old}\n+{new}\n"
    message = f"{DECODE}\n    def {func}({var}):\n>   {old}\nE   {DECODE}\n\n{module}.py:2: AttributeError"
    return steps.trajectory(
        *extra,
        steps.run("failed", [(f"test_{module}.py::test_{func}", message)]),
        steps.patch(patch, [f"{module}.py"]),
        steps.run("passed"),
        tid=tid,
        repo=f"acme/{module}",
    )


def test_the_same_decode_fix_before_another_call_is_one_lesson_and_earns_credit(steps) -> None:
    [first] = HeuristicDistiller().distill([_decode_fix(steps, "names", "clean", "s", "strip", "traj-a")])
    assert first.pattern == DECODE
    assert [(r.before, r.after) for r in first.rule] == [("<name>.decode(<str>)", "<name>")]
    search = {"tool": "search_skills", "args": {"query": DECODE}, "result": {"returned": [first.skill_id]}, "ok": True}
    other = _decode_fix(steps, "users", "key", "raw_name", "lower", "traj-b", search)
    assert applied_rule(other, first)
    [second] = HeuristicDistiller().distill([other])
    assert lesson.same_rule(first, second)
    assert lesson.lesson_tag_of(first) == lesson.lesson_tag_of(second)
