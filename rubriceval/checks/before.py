"""before: A must occur before B (e.g. identity verified before any order detail). Passes when B never occurs;
fails at B's first turn, quoting it, when A has not occurred by then."""
from __future__ import annotations

from rubriceval.checks.turns import conversation_of, turn_hits
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import BeforeCheck
from rubriceval.verdict import Evidence


def before(item: BeforeCheck, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    thens = turn_hits(conversation, item.then, item.then_roles, item.case_sensitive)
    if not thens:
        return Evidence(item=item.id, passed=True, detail=f"'{item.then}' never occurs, so nothing has to precede it")
    then = thens[0]
    firsts = turn_hits(conversation, item.first, item.first_roles, item.case_sensitive)
    first = firsts[0] if firsts else None
    if first is not None and (first.turn, first.start) < (then.turn, then.start):
        return Evidence(item=item.id, passed=True, turn=first.turn, span=first.span, start=first.start,
                        detail=f"'{first.span}' (turn {first.turn}) comes before '{then.span}' (turn {then.turn})")
    seen = f"; it first appears in turn {first.turn}" if first is not None else "; it never appears"
    return Evidence(item=item.id, passed=False, turn=then.turn, span=then.span, start=then.start, missing=[item.first],
                    detail=f"turn {then.turn} says '{then.span}' before any of '{item.first}'{seen}")
