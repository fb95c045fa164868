"""What the tool-call metrics share: the calls the assistant made, and how argument values are compared.

Ragas compares argument values as `str(value)` (its ExactMatch on `str(pred)` vs `str(ref)`), so the string "3"
matches the integer 3. We do the same for scalars; dicts and lists are written as JSON with sorted keys, so two
equal nested objects match whatever their key order (Ragas compares their Python reprs, which depend on it).
"""
from __future__ import annotations

import json
import math
import unicodedata
from typing import Any

from pydantic import BaseModel

from rubriceval.common.errors import ConfigError
from rubriceval.data.conversation import Conversation, ToolCall
from rubriceval.standard_metrics.agent_options import AgentOptions


class MadeCall(BaseModel):
    """A tool call the assistant made, with the number of the turn it was made in (from 1)."""

    turn: int
    call: ToolCall


def made_calls(conversation: Conversation) -> list[MadeCall]:
    """Every tool call of every assistant turn, in conversation order."""
    return [MadeCall(turn=number, call=call) for number, turn in conversation.numbered("assistant")
            for call in turn.tool_calls]


def value_text(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(unicodedata.normalize("NFKC", value).strip().replace(",", ""))
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _folded(value: Any) -> str:
    return unicodedata.normalize("NFKC", value_text(value)).strip().casefold()


def compare_values(predicted: Any, reference: Any, options: AgentOptions, *, argument: str = "") -> float:
    """How well one predicted argument value matches the reference value: 0–1."""
    match = options.argument_match
    if callable(match):
        result = match(predicted, reference)
        if isinstance(result, bool):
            return float(result)
        if not isinstance(result, (int, float)) or not 0.0 <= float(result) <= 1.0:
            raise ConfigError(f"the argument comparison returned {result!r} for argument {argument!r}; "
                              "it must return a number in [0, 1] or a bool", field="agent_options.argument_match")
        return float(result)
    if match == "numeric":
        a, b = _number(predicted), _number(reference)
        if a is not None and b is not None:
            return float(abs(a - b) <= options.numeric_tolerance)
    if match == "case_insensitive":
        return float(_folded(predicted) == _folded(reference))
    return float(value_text(predicted) == value_text(reference))


class ArgumentScore(BaseModel):
    score: float
    per_argument: dict[str, float]     # reference argument → its match (0 when the call lacks it)
    missing: list[str]                 # reference arguments the call did not pass
    extra: list[str]                   # arguments the call passed that the reference does not have (no penalty)


def argument_score(predicted: dict[str, Any], reference: dict[str, Any], options: AgentOptions) -> ArgumentScore:
    """Mean match over the REFERENCE's arguments (Ragas): extra predicted arguments cost nothing; no reference
    arguments → 1 if the call passed none either, else 0."""
    extra = [k for k in predicted if k not in reference]
    if not reference:
        return ArgumentScore(score=1.0 if not predicted else 0.0, per_argument={}, missing=[], extra=extra)
    per_argument = {k: (compare_values(predicted[k], v, options, argument=k) if k in predicted else 0.0)
                    for k, v in reference.items()}
    return ArgumentScore(score=sum(per_argument.values()) / len(reference), per_argument=per_argument,
                         missing=[k for k in reference if k not in predicted], extra=extra)


def hashable(value: Any) -> Any:
    """A value as a set member, nested dicts/lists included (Ragas's `_make_hashable`)."""
    if isinstance(value, dict):
        return frozenset((k, hashable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(hashable(v) for v in value)
    if isinstance(value, set):
        return frozenset(hashable(v) for v in value)
    return value


def call_key(call: ToolCall) -> tuple[str, Any]:
    return call.name, hashable(call.arguments)


def order_key(call: ToolCall) -> tuple[str, ...]:
    """Ragas's sort key for order-free comparison: the name, then each argument name and str(value), sorted."""
    key = [call.name]
    for name in sorted(call.arguments):
        key += [name, str(call.arguments[name])]
    return tuple(key)
