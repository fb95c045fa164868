"""Per-turn forms of the single-turn checks (`turns: assistant`): must_mention, must_not_mention, regex and
max_length run on every turn of that role, each turn viewed as a single-turn sample; the first failing turn is the
evidence (e.g. the turn that asks for a password)."""
from __future__ import annotations

from typing import Any, Callable

from rubriceval.checks.base import reworded, worded
from rubriceval.checks.turns import conversation_of, role_names, turn_sample
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.scoring.verdict import Evidence


def each_turn(item: Any, sample: Sample, check: Callable[[Any, Sample], Evidence]) -> Evidence:
    conversation = conversation_of(sample)
    numbers = [n for n, _ in conversation.numbered(item.turns)]
    match = getattr(item, "match", None)
    if match is None:
        results = [(n, check(item, turn_sample(conversation, n))) for n in numbers]
    else:
        # The turn is passed on, for a question about it; with a question, the first failing turn decides (no
        # further turn is asked about).
        results = []
        for n in numbers:
            results.append((n, check(item, turn_sample(conversation, n), at=(conversation, n))))
            if match.ask and results[-1][1].passed is False:
                break
    failed = [(n, ev) for n, ev in results if ev.passed is False]
    if not failed:
        role = role_names([item.turns])
        return Evidence(item=item.id, passed=True, **(worded(sample, "ev_turns_all_pass", n=len(results), role=role)
                                                      if results else worded(sample, "ev_turns_none", role=role)))
    number, first = failed[0]
    message = (msg("ev_turns_failed", turn=number, check=first.message, turns=[n for n, _ in failed])
               if len(failed) > 1 else msg("ev_turn_failed", turn=number, check=first.message))
    return first.model_copy(update={"turn": number, **reworded(sample, message)})
