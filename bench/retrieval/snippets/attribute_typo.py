"""A misspelled attribute on a dataclass instance."""

from dataclasses import dataclass


@dataclass
class User:
    name: str
    email: str


def mailto(user: User) -> str:
    return f"mailto:{user.emial}"


print(mailto(User("ada", "ada@example.com")))
