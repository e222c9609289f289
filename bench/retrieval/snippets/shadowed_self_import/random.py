"""Practice script: roll a die."""

import random


def roll() -> int:
    return random.randint(1, 6)


print(roll())
