"""The knobs of the conversation metrics (tool calls, topics), validated once at the boundary (`MetricOptions.agent`).

    score_conversation(conv, ["tool_call_accuracy"], agent_options={"argument_match": "numeric",
                                                                     "numeric_tolerance": 0.01})
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ArgumentMatchName = Literal["exact", "case_insensitive", "numeric"]
# A callable gets the predicted and the reference value as they are (not as text) and returns 0–1 or a bool.
ArgumentMatcher = Callable[[Any, Any], float | bool]
TopicMode = Literal["precision", "recall", "f1"]


class AgentOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)

    # tool_call_accuracy: how one argument value is compared with the reference's (Ragas: exact string match).
    #   exact             str(pred) == str(ref)   (dicts/lists as sorted-key JSON)
    #   case_insensitive  the same after Unicode NFKC (全角 → half-width), casefold and trimming
    #   numeric           |pred − ref| ≤ numeric_tolerance when both read as numbers, else exact
    argument_match: ArgumentMatchName | ArgumentMatcher = "exact"
    numeric_tolerance: float = Field(default=1e-6, ge=0)
    # tool_call_accuracy: True = the calls must come in the reference's order (Ragas's default strict_order).
    strict_order: bool = True
    # topic_adherence: which of precision / recall / F1 over the reference topics is the score (Ragas: f1).
    topic_mode: TopicMode = "f1"

    def argument_match_label(self) -> str:
        """A stable name of the comparison, part of the metric version (a different rule → a different score)."""
        match = self.argument_match
        if callable(match):
            return f"callable.{getattr(match, '__module__', '?')}.{getattr(match, '__qualname__', '?')}"
        if match == "numeric":
            return f"numeric.{self.numeric_tolerance:g}"
        return match
