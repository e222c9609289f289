"""Mutation operators: each breaks what it names, as a minimal text edit, and only compiling real changes count."""

from __future__ import annotations

import textwrap

import pytest

from agent.tasks.mutate import mutants_of, unified_diff

CODE = textwrap.dedent(
    """\
    def f(items, limit=3, strict=True):
        if not items:
            raise ValueError("empty")
        total = 0
        for i in range(len(items) - 1):
            if items[i] < limit and strict:
                total += items[i] * 2
            record(items, i)
        return total
    """
)


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    pairs = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=False) if a != b]
    return pairs


@pytest.mark.parametrize(
    ("operator", "before", "after"),
    [
        ("comparison_flip", "if items[i] < limit and strict:", "if items[i] <= limit and strict:"),
        ("wrong_operator", "total += items[i] * 2", "total += items[i] / 2"),
        ("wrong_operator", "if items[i] < limit and strict:", "if items[i] < limit or strict:"),
        ("off_by_one", "for i in range(len(items) - 1):", "for i in range(len(items) - 2):"),
        ("wrong_default", "def f(items, limit=3, strict=True):", "def f(items, limit=3, strict=False):"),
        ("changed_exception", 'raise ValueError("empty")', 'raise TypeError("empty")'),
        ("wrong_return", "return total", "return None"),
        ("swapped_arguments", "record(items, i)", "record(i, items)"),
        ("negated_condition", "if items[i] < limit and strict:", "if not (items[i] < limit and strict):"),
    ],
)
def test_an_operator_changes_exactly_the_site_it_names(operator: str, before: str, after: str) -> None:
    found = [m for m in mutants_of("m.py", CODE) if m.operator == operator]
    edits = [changed_lines(m.original, m.mutated) for m in found]
    assert [(before.strip(), after.strip())] in [[(a.strip(), b.strip()) for a, b in e] for e in edits]


def test_removing_a_guard_or_a_call_deletes_whole_lines() -> None:
    found = {m.operator: m for m in mutants_of("m.py", CODE) if m.operator in ("removed_guard", "dropped_call")}
    assert "if not items" not in found["removed_guard"].mutated
    assert "raise ValueError" not in found["removed_guard"].mutated
    assert "record(items, i)" not in found["dropped_call"].mutated
    assert len(found["dropped_call"].mutated.splitlines()) == len(CODE.splitlines()) - 1


def test_every_mutant_compiles_differs_and_is_unique() -> None:
    found = mutants_of("m.py", CODE)
    assert len(found) > 15
    assert len({m.key for m in found}) == len(found)
    for m in found:
        compile(m.mutated, "m.py", "exec")
        assert m.mutated != CODE


def test_only_covered_lines_are_mutated() -> None:
    found = mutants_of("m.py", CODE, covered={9})
    assert found
    assert {m.line for m in found} == {9}


def test_the_gold_patch_is_a_p1_diff_from_the_mutant_back_to_the_original() -> None:
    mutant = next(m for m in mutants_of("pkg/m.py", CODE) if m.operator == "wrong_return")
    patch = mutant.gold_patch
    assert patch.startswith("--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ ")
    assert "-    return None\n+    return total\n" in patch
    assert unified_diff("x.py", "a", "b").endswith("\\ No newline at end of file\n")
