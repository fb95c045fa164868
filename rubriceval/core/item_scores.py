"""The per-item results a scored rubric verdict keeps under `details["item_scores"]`: the one part of a verdict's
details another package reads. scoring/rubric_scorer.py writes it; audit/official.py (appeals: which checks are
deductions, and the score recomputed without some of them) reads it through `ItemScores.read`.

The stored JSON is a plain object, item id → a judge item's score (1–5) or a check's result (true / false, null when
the check reached no decision), exactly as earlier releases wrote it, so runs stored by them read unchanged.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import RootModel, ValidationError

DETAILS_KEY = "item_scores"

# bool before int: JSON true stays a check result and 4 stays a judge score (pydantic's smart union keeps exact types).
ItemResult = bool | int | None


class ItemScores(RootModel[dict[str, ItemResult]]):
    """item id → a judge item's score, or a check's passed (True / False / None), in the rubric's item order."""

    def failed_checks(self) -> list[str]:
        """The checks that failed: the deductions an agent may appeal one at a time."""
        return [item for item, result in self.root.items() if result is False]

    def items(self) -> list[tuple[str, ItemResult]]:
        return list(self.root.items())

    def details(self) -> dict[str, dict[str, ItemResult]]:
        """The entry of a verdict's details that holds these results."""
        return {DETAILS_KEY: dict(self.root)}

    @classmethod
    def read(cls, details: Mapping[str, Any] | None) -> ItemScores | None:
        """The item results of a verdict's details; None when it keeps none (an unscored verdict, a metric, or a
        value that is not an item → result object, which nothing can recompute from: a reviewer decides instead)."""
        stored = (details or {}).get(DETAILS_KEY)
        if not isinstance(stored, dict) or not stored:
            return None
        try:
            return cls.model_validate(stored)
        except ValidationError:
            return None
