"""Skills guide synthesis: operators that cause the error classes the bank knows are drawn earlier."""

from __future__ import annotations

from collections import Counter

from agent.tasks.mutate import mutants_of
from agent.tasks.weights import bank_error_classes, operator_weights, read_bank_skills, weighted_order
from tests.agent.tasks.test_operators import CODE


def test_the_bank_error_classes_come_from_skill_patterns(skill_factory) -> None:
    skills = [
        skill_factory("a", "Division by zero on empty input", "ZeroDivisionError: division by zero"),
        skill_factory("b", "Missing key", "KeyError: 'sku'"),
        skill_factory("c", "Guard empty lists", "ZeroDivisionError in average()"),
    ]
    assert bank_error_classes(skills) == Counter({"ZeroDivisionError": 2, "KeyError": 1})


def test_operators_causing_known_errors_weigh_more_and_come_first_on_average() -> None:
    weights = operator_weights(Counter({"ZeroDivisionError": 5}))
    assert weights["removed_guard"] > weights["swapped_arguments"] == 1.0
    found = mutants_of("m.py", CODE)
    guard_rank = {"flat": 0.0, "weighted": 0.0}
    for seed in range(30):
        for name, w in (("flat", operator_weights(Counter())), ("weighted", weights)):
            order = weighted_order(found, w, seed)
            guard_rank[name] += next(i for i, m in enumerate(order) if m.operator == "removed_guard")
    assert guard_rank["weighted"] < guard_rank["flat"]


def test_the_order_is_a_permutation_fixed_by_the_seed() -> None:
    found = mutants_of("m.py", CODE)
    order = weighted_order(found, operator_weights(Counter()), 7)
    assert sorted(m.key for m in order) == sorted(m.key for m in found)
    assert [m.key for m in weighted_order(found, operator_weights(Counter()), 7)] == [m.key for m in order]


def test_skills_are_read_from_the_catalog_without_opening_the_vector_store(hash_bank, skill_factory, tmp_path) -> None:
    hash_bank.upsert([skill_factory("z", "Zero division", "ZeroDivisionError: division by zero")])
    hash_bank.flush()
    assert [s.skill_id for s in read_bank_skills(tmp_path / "bank")] == ["z"]
    assert read_bank_skills(tmp_path / "nowhere") == []
