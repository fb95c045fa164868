"""max_count: at most `max` (and at least `min`) turns contain any of the phrases or show `match` (entities, regex,
a per-turn question) — e.g. apologise once, not in every turn. Evidence: the first turn over the limit, quoted, and
every turn that matched. Turns are read in order; with a question, once the count is over `max` no further turn
is asked about."""
from __future__ import annotations

from rubriceval.checks.base import reworded, synonym_group
from rubriceval.checks.predicates import TurnMatch, turn_match
from rubriceval.checks.turns import conversation_of, role_names
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.predicate import Predicate
from rubriceval.rubric.schema import MaxCount
from rubriceval.scoring.verdict import Evidence


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
    for number, turn in conversation.numbered():
        if turn.role in item.roles and (hit := turn_match(predicate, conversation, number, item.case_sensitive)):
            hits.append(hit)
            if len(hits) > item.max and predicate.ask:
                break                  # decisive: over the limit, no more questions (text matches are all listed)
    said = dict(n=len(hits), roles=role_names(item.roles), phrases=what_counts(item))
    counted = (msg("ev_count_where", **said, turns=[h.turn for h in hits]) if hits else msg("ev_count", **said))
    if len(hits) > item.max:
        over = hits[item.max]
        question = {"question": over.question, "p_yes": over.p_yes} if over.question else {}
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
