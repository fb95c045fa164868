"""The base of every rubric model: unknown fields are refused, and every attribute assignment is counted, so a
rubric can cache its content hash and still see an edit (rubriceval/rubric/schema.py, Rubric.version_tag)."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class _Edits:
    """How many times a field of any rubric model was assigned in this process (`rubric.x = …`, `item.y = …`)."""

    count = 0


def edit_count() -> int:
    return _Edits.count


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if not name.startswith("_"):            # private attributes (the cached hash itself) are not edits
            _Edits.count += 1
