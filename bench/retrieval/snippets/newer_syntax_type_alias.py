"""A PEP 695 type alias (Python 3.12+)."""

type Vector = list[float]


def norm(v: Vector) -> float:
    return sum(x * x for x in v) ** 0.5


print(norm([3.0, 4.0]))
