"""Lenient-but-safe input coercions shared by Sample and Conversation fields."""
from __future__ import annotations

from typing import Any


def string_list(value: Any) -> Any:
    """None → []; a bare string is refused (it is almost always a forgotten list, not one item)."""
    if value is None:
        return []
    if isinstance(value, str):
        raise ValueError("must be a list of strings, got a single string (wrap it as [\"...\"] or a JSON list)")
    return value


def tag_list(value: Any) -> Any:
    """'a, b，c' → ['a', 'b', 'c'] (ASCII or full-width commas); None → []."""
    if value is None:
        return []
    if isinstance(value, str):
        return [t.strip() for t in value.replace("，", ",").split(",") if t.strip()]
    return value
