"""before: A must occur before B (e.g. identity verified before any order detail). Passes when B never occurs;
fails at B's first turn, quoting it, when A has not occurred by then."""
from __future__ import annotations

from rubriceval.checks.base import quoted, synonym_group, worded
from rubriceval.checks.turns import conversation_of, turn_hits
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import BeforeCheck
from rubriceval.scoring.verdict import Evidence


def before(item: BeforeCheck, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    thens = turn_hits(conversation, item.then, item.then_roles, item.case_sensitive)
    if not thens:
        return Evidence(item=item.id, passed=True, **worded(sample, "ev_before_never", then=synonym_group(item.then)))
    then = thens[0]
    firsts = turn_hits(conversation, item.first, item.first_roles, item.case_sensitive)
    first = firsts[0] if firsts else None
    if first is not None and (first.turn, first.start) < (then.turn, then.start):
        return Evidence(item=item.id, passed=True, turn=first.turn, span=first.span, start=first.start,
                        **worded(sample, "ev_before_ok", first=quoted(first.span), first_turn=first.turn,
                                 then=quoted(then.span), then_turn=then.turn))
    said = dict(then_turn=then.turn, then=quoted(then.span), first=synonym_group(item.first))
    wording = (worded(sample, "ev_before_late", **said, first_turn=first.turn) if first is not None else
               worded(sample, "ev_before_absent", **said))
    return Evidence(item=item.id, passed=False, turn=then.turn, span=then.span, start=then.start, missing=[item.first],
                    **wording)
