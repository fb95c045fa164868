"""Metric names as a user gives them: known single-turn or conversation metrics, resolved in order (the one check)."""
from __future__ import annotations

from collections.abc import Iterable

from rubriceval.common.errors import ConfigError
from rubriceval.standard_metrics.catalog import METRICS
from rubriceval.standard_metrics.conversation.catalog import CONVERSATION_METRICS


def check_known(names: Iterable[str]) -> list[str]:
    """The names as given, single-turn or conversation metrics; an unknown name is a user error (the one check)."""
    names = list(names)
    unknown = [n for n in names if n not in METRICS and n not in CONVERSATION_METRICS]
    if unknown:
        raise ConfigError(f"unknown metric(s): {', '.join(repr(n) for n in unknown)}", field="metrics",
                          hint="available: " + ", ".join([*METRICS, *CONVERSATION_METRICS]))
    return names


def resolve_names(names: Iterable[str]) -> list[str]:
    """Distinct known single-turn metric names in the order given."""
    resolved: list[str] = []
    for name in check_known(names):
        if name in CONVERSATION_METRICS:
            raise ConfigError(f"{name} scores whole conversations, not single-turn samples", field="metrics",
                              hint="give a conversation dataset (turns/messages), or leave it out")
        if name not in resolved:
            resolved.append(name)
    return resolved


def split_kinds(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(single-turn names, conversation metric names); either kind may be asked for on conversations."""
    names = list(names)
    return [n for n in names if n not in CONVERSATION_METRICS], [n for n in names if n in CONVERSATION_METRICS]
