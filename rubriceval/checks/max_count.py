"""max_count: at most `max` (and at least `min`) turns contain any of the phrases — e.g. apologise once, not in
every turn. Evidence: the first turn over the limit, quoted, and every turn that matched."""
from __future__ import annotations

from rubriceval.checks.turns import conversation_of, turn_hits, turn_list
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import MaxCount
from rubriceval.verdict import Evidence


def max_count(item: MaxCount, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    hits = turn_hits(conversation, "|".join(item.phrases), item.roles, item.case_sensitive)
    roles = "/".join(item.roles)
    where = f" (turns {turn_list(h.turn for h in hits)})" if hits else ""
    counted = f"{len(hits)} {roles} turn(s) contain {' | '.join(item.phrases)}{where}"
    if len(hits) > item.max:
        over = hits[item.max]
        return Evidence(item=item.id, passed=False, turn=over.turn, span=over.span, start=over.start,
                        detail=f"{counted}; at most {item.max} allowed, turn {over.turn} is one too many")
    if len(hits) < item.min:
        return Evidence(item=item.id, passed=False, missing=list(item.phrases),
                        detail=f"{counted}; at least {item.min} required")
    first = hits[0] if hits else None
    return Evidence(item=item.id, passed=True, detail=f"{counted}; allowed {item.min}–{item.max}",
                    turn=first.turn if first else None, span=first.span if first else None,
                    start=first.start if first else None)
