"""A misspelled variable name."""


def average(values: list[float]) -> float:
    result = sum(values) / len(values)
    return reslt


print(average([1.0, 2.0, 3.0]))
