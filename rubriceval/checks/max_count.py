"""max_count: at most `max` (and at least `min`) turns contain any of the phrases — e.g. apologise once, not in
every turn. Evidence: the first turn over the limit, quoted, and every turn that matched."""
from __future__ import annotations

from rubriceval.checks.base import reworded, synonym_group
from rubriceval.checks.turns import conversation_of, role_names, turn_hits
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.schema import MaxCount
from rubriceval.scoring.verdict import Evidence


def max_count(item: MaxCount, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    hits = turn_hits(conversation, "|".join(item.phrases), item.roles, item.case_sensitive)
    said = dict(n=len(hits), roles=role_names(item.roles), phrases=[synonym_group(p) for p in item.phrases])
    counted = (msg("ev_count_where", **said, turns=[h.turn for h in hits]) if hits else msg("ev_count", **said))
    if len(hits) > item.max:
        over = hits[item.max]
        return Evidence(item=item.id, passed=False, turn=over.turn, span=over.span, start=over.start,
                        **reworded(sample, msg("ev_count_over", counted=counted, max=item.max, turn=over.turn)))
    if len(hits) < item.min:
        return Evidence(item=item.id, passed=False, missing=list(item.phrases),
                        **reworded(sample, msg("ev_count_under", counted=counted, min=item.min)))
    first = hits[0] if hits else None
    return Evidence(item=item.id, passed=True,
                    **reworded(sample, msg("ev_count_ok", counted=counted, min=item.min, max=item.max)),
                    turn=first.turn if first else None, span=first.span if first else None,
                    start=first.start if first else None)
