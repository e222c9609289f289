"""Skills guide synthesis: mutants whose bug class surfaces as errors the skill bank knows are tried first.

The bank's error classes are the exception types named in its skills' patterns and titles. Each operator's weight
is 1 plus `BOOST` times the share of the bank's skills about the error types it tends to cause; candidates are then
drawn in a seeded weighted order, so every class still gets a chance.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from agent.tasks.mutate import Mutant
from agent.tasks.operators import ERROR_CLASSES
from skills_store.models import Skill

BOOST = 3.0
EXCEPTION_RE = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception))\b")


def error_classes_of(text: str) -> set[str]:
    return set(EXCEPTION_RE.findall(text))


def bank_error_classes(skills: Iterable[Skill]) -> Counter[str]:
    """How many skills mention each exception type."""
    counts: Counter[str] = Counter()
    for skill in skills:
        counts.update(error_classes_of(f"{skill.title}\n{skill.pattern}"))
    return counts


def read_bank_skills(home: Path) -> list[Skill]:
    """The skills in the bank's catalog under `home`, read-only (no vector store, no embedding model)."""
    path = home / "catalog.db"
    if not path.is_file():
        return []
    from skills_store.catalog import Catalog

    catalog = Catalog(path, readonly=True)
    try:
        return catalog.get(catalog.iter_ids())
    finally:
        catalog.close()


def operator_weights(classes: Counter[str]) -> dict[str, float]:
    total = sum(classes.values())
    weights = {}
    for operator, errors in ERROR_CLASSES.items():
        share = 0.0 if total == 0 else sum(classes[e] for e in set(errors)) / total
        weights[operator] = 1.0 + BOOST * min(share, 1.0)
    return weights


def weighted_order(mutants: Sequence[Mutant], weights: dict[str, float], seed: int) -> list[Mutant]:
    """`mutants` in a seeded order that draws the next operator in proportion to its weight (then a random
    mutant of it), so the classes the bank knows come first and every class still appears early."""
    rng = random.Random(seed)
    queues: dict[str, list[Mutant]] = {}
    for mutant in sorted(mutants, key=lambda m: m.key):
        queues.setdefault(mutant.operator, []).append(mutant)
    for queue in queues.values():
        rng.shuffle(queue)
    order: list[Mutant] = []
    while queues:
        names = sorted(queues)
        name = rng.choices(names, weights=[weights.get(n, 1.0) for n in names])[0]
        order.append(queues[name].pop())
        if not queues[name]:
            del queues[name]
    return order
