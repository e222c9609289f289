"""Converting between naming conventions."""

import re

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
SMALL_WORDS = frozenset({"a", "an", "and", "of", "the", "in", "on", "or"})


def camel_to_snake(name):
    return _BOUNDARY.sub("_", name).lower()


def snake_to_camel(name, upper_first=False):
    parts = [p for p in name.split("_") if p]
    if not parts:
        return ""
    head = parts[0].capitalize() if upper_first else parts[0].lower()
    return head + "".join(p.capitalize() for p in parts[1:])


def title_case(text):
    """Capitalise every word except small ones, which stay lowercase unless they come first."""
    words = text.split()
    out = []
    for index, word in enumerate(words):
        if index > 0 and word.lower() in SMALL_WORDS:
            out.append(word.lower())
        else:
            out.append(word[:1].upper() + word[1:].lower())
    return " ".join(out)
