"""Per-turn forms of the single-turn checks (`turns: assistant`): must_mention, must_not_mention, regex and
max_length run on every turn of that role, each turn viewed as a single-turn sample; the first failing turn is the
evidence (e.g. the turn that asks for a password)."""
from __future__ import annotations

from typing import Any, Callable

from rubriceval.checks.turns import conversation_of, turn_list, turn_sample
from rubriceval.data.sample import Sample
from rubriceval.verdict import Evidence


def each_turn(item: Any, sample: Sample, check: Callable[[Any, Sample], Evidence]) -> Evidence:
    conversation = conversation_of(sample)
    numbers = [n for n, _ in conversation.numbered(item.turns)]
    results = [(n, check(item, turn_sample(conversation, n))) for n in numbers]
    failed = [(n, ev) for n, ev in results if ev.passed is False]
    if not failed:
        return Evidence(item=item.id, passed=True,
                        detail=f"all {len(results)} {item.turns} turn(s) pass" if results else f"no {item.turns} turn")
    number, first = failed[0]
    also = f" (failing turns: {turn_list(n for n, _ in failed)})" if len(failed) > 1 else ""
    return first.model_copy(update={"turn": number, "detail": f"turn {number}: {first.detail}{also}"})
