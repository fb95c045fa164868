"""max_count: at most `max` (and at least `min`) turns contain any of the phrases or show `match` (entities, regex,
a per-turn question) — e.g. apologise once, not in every turn. Evidence: the first turn over the limit, quoted, and
every turn that matched. Turns are read in order; with a question, once the outcome is decided (over `max`, or at
least `min` and `max` out of reach) no further turn is asked about."""
from __future__ import annotations

from typing import Any

from rubriceval.checks.base import reworded, synonym_group
from rubriceval.checks.predicates import TurnMatch, turn_match
from rubriceval.checks.turns import conversation_of, role_names
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.predicate import Predicate
from rubriceval.rubric.schema import MaxCount


def counted_predicate(item) -> Predicate:
    """The item's phrases and its `match` as one predicate (any of them counts)."""
    if item.match is None:
        return Predicate(phrases=["|".join(item.phrases)])
    return item.match.model_copy(update={"phrases": [*item.phrases, *item.match.phrases]})


def what_counts(item) -> list[str]:
    return [synonym_group(p) for p in item.phrases] + ([item.match.describe()] if item.match is not None else [])


def max_count(item: MaxCount, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    predicate = counted_predicate(item)
    hits: list[TurnMatch] = []
    numbers = [n for n, t in conversation.numbered() if t.role in item.roles]
    for index, number in enumerate(numbers):
        if hit := turn_match(predicate, conversation, number, item.case_sensitive):
            hits.append(hit)
        # With a question, stop once the outcome is decided: over the limit, or at least `min` with no way left to
        # exceed `max` (text matches are only cheap to list, so without a question every turn is read).
        left = len(numbers) - index - 1
        if predicate.ask and (len(hits) > item.max or (len(hits) >= item.min and len(hits) + left <= item.max)):
            break
    said = dict(n=len(hits), roles=role_names(item.roles), phrases=what_counts(item))
    counted = (msg("ev_count_where", **said, turns=[h.turn for h in hits]) if hits else msg("ev_count", **said))
    if len(hits) > item.max:
        over = hits[item.max]
        question: dict[str, Any] = {"question": over.question, "p_yes": over.p_yes} if over.question else {}
        return Evidence(item=item.id, passed=False, turn=over.turn, span=over.span, start=over.start, **question,
                        **reworded(sample, msg("ev_count_over", counted=counted, max=item.max, turn=over.turn)))
    if len(hits) < item.min:
        return Evidence(item=item.id, passed=False, missing=list(item.phrases) or what_counts(item),
                        **reworded(sample, msg("ev_count_under", counted=counted, min=item.min)))
    first = hits[0] if hits else None
    return Evidence(item=item.id, passed=True,
                    **reworded(sample, msg("ev_count_ok", counted=counted, min=item.min, max=item.max)),
                    turn=first.turn if first else None, span=first.span if first else None,
                    start=first.start if first else None)
