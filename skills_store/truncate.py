"""Cutting long texts to their head and tail, with a marker saying how much was left out."""

from __future__ import annotations

from typing import Any


def truncate_text(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its head and tail around a marker of what was cut."""
    if len(text) <= limit:
        return text
    keep = limit - 60
    head, tail = text[: keep * 2 // 3], text[len(text) - keep // 3 :]
    return f"{head}\n[... {len(text) - len(head) - len(tail):,} characters truncated ...]\n{tail}"


def truncate_value(value: Any, limit: int) -> Any:
    """`value` with every string in it (recursively) cut by `truncate_text`."""
    if isinstance(value, str):
        return truncate_text(value, limit)
    if isinstance(value, dict):
        return {k: truncate_value(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [truncate_value(v, limit) for v in value]
    return value
