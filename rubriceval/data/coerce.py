"""Lenient-but-safe input coercions shared by Sample and Conversation fields."""
from __future__ import annotations

import json
from typing import Any


def string_list(value: Any) -> Any:
    """None → []; a bare string is refused (it is almost always a forgotten list, not one item)."""
    if value is None:
        return []
    if isinstance(value, str):
        raise ValueError("must be a list of strings, got a single string (wrap it as [\"...\"] or a JSON list)")
    return value


def tag_list(value: Any) -> Any:
    """'a, b，c' → ['a', 'b', 'c'] (ASCII or full-width commas); JSON text of a list ('["售后组","W46"]', as a
    CSV/Excel cell or a chat-log export holds it) → that list; None → []."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                parsed = None           # not JSON after all: '[VIP], 售后' is two tags split on the comma
            if isinstance(parsed, list):
                return [str(t).strip() for t in parsed if str(t).strip()]
        return [t.strip() for t in text.replace("，", ",").split(",") if t.strip()]
    return value
