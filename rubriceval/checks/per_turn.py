"""Per-turn forms of the single-turn checks (`turns: assistant`): must_mention, must_not_mention, regex and
max_length run on every turn of that role, each turn viewed as a single-turn sample; the first failing turn is the
evidence (e.g. the turn that asks for a password)."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rubriceval.checks.base import reworded, worded
from rubriceval.checks.turns import conversation_of, role_names, turn_sample
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg


def each_turn(item: Any, sample: Sample, check: Callable[..., Evidence]) -> Evidence:
    conversation = conversation_of(sample)
    numbers = [n for n, _ in conversation.numbered(item.turns)]
    match = getattr(item, "match", None)
    share = getattr(item, "min_share", None)
    need = math.ceil(share * len(numbers) - 1e-9) if share else len(numbers)     # turns that must pass
    if match is None:
        results = [(n, check(item, turn_sample(conversation, n))) for n in numbers]
    else:
        # The turn is passed on, for a question about it; with a question, no turn is asked about once the outcome
        # is decided (too many turns failed, or enough passed).
        results = []
        for n in numbers:
            results.append((n, check(item, turn_sample(conversation, n), at=(conversation, n))))
            passes = sum(1 for _, ev in results if ev.passed is not False)
            if match.ask and (len(results) - passes > len(numbers) - need or passes >= need):
                break
    failed = [(n, ev) for n, ev in results if ev.passed is False]
    if share is not None:
        return _share_evidence(item, sample, results, failed, need, len(numbers))
    if not failed:
        role = role_names([item.turns])
        return Evidence(item=item.id, passed=True, **(worded(sample, "ev_turns_all_pass", n=len(results), role=role)
                                                      if results else worded(sample, "ev_turns_none", role=role)))
    number, first = failed[0]
    message = (msg("ev_turns_failed", turn=number, check=first.message, turns=[n for n, _ in failed])
               if len(failed) > 1 else msg("ev_turn_failed", turn=number, check=first.message))
    return first.model_copy(update={"turn": number, **reworded(sample, message)})


def _share_evidence(item: Any, sample: Sample, results: list, failed: list, need: int, total: int) -> Evidence:
    """min_share: passed when at least `need` of the `total` turns pass; the first failing turn is the evidence."""
    passes = sum(1 for _, ev in results if ev.passed is not False)
    passed = passes >= need
    parts = [msg("ev_turns_share", passed=passes, asked=len(results), total=total, need=need)]
    if failed:
        number, first = failed[0]
        parts.append(msg("ev_turn_failed", turn=number, check=first.message))
        base = first.model_copy(update={"turn": number})
    else:
        base = Evidence(item=item.id)
    return base.model_copy(update={"passed": passed, **reworded(sample, msg("ev_clauses", parts=parts))})
