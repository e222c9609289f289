"""Old code importing an ABC from collections (removed in Python 3.10)."""

from collections import Mapping


def flatten(d: Mapping, prefix: str = "") -> dict:
    out = {}
    for key, value in d.items():
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


print(flatten({"db": {"host": "x", "port": 1}}))
