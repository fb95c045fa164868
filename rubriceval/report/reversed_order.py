"""A value that sorts backwards. Python's heapq is a min-heap: a heap of Reversed values keeps the n smallest values
seen (its top is the largest kept), which is how the reports keep their first n rows in one pass over a run."""
from __future__ import annotations

from typing import Any


class Reversed:
    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __lt__(self, other: Reversed) -> bool:
        return self.value > other.value

    def __gt__(self, other: Reversed) -> bool:
        return self.value < other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reversed) and self.value == other.value
