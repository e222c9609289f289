"""Factorial whose base case is never reached for an input of 0."""


def factorial(n: int) -> int:
    if n == 1:
        return 1
    return n * factorial(n - 1)


print([factorial(n) for n in range(5)])
