"""A config class checking isinstance against collections.MutableMapping."""

import collections


def merge(base: dict, override: dict) -> dict:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, collections.MutableMapping) and key in merged:
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


print(merge({"db": {"host": "a"}}, {"db": {"port": 5}}))
