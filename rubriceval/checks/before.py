"""before: A must occur before B (e.g. identity verified before any order detail). Passes when B never occurs;
fails at B's first turn, quoting it, when A has not occurred by then.

A and B are literal phrases or predicates (entities, regex, a per-turn question: rubriceval/rubric/predicate.py).
Turns are read in order and the check stops at the first decisive turn — A found (pass), or B found before A
(fail) — so a question is asked on no turn after it. The evidence names both turns compared; what it adds about
the other side after the decisive turn is looked up in the text only (no question is asked for it)."""
from __future__ import annotations

from rubriceval.checks.base import synonym_group, worded
from rubriceval.checks.predicates import TurnMatch, said, turn_match, turn_matches
from rubriceval.checks.turns import conversation_of
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.rubric.predicate import Match, as_predicate
from rubriceval.rubric.schema import BeforeCheck


def described(value: Match) -> str:
    return synonym_group(value) if isinstance(value, str) else value.describe()


def missing_of(value: Match) -> str:
    """What evidence lists as missing: the phrases as written, or the predicate described."""
    return value if isinstance(value, str) else value.describe()


def _question(hit: TurnMatch | None) -> dict:
    return {"question": hit.question, "p_yes": hit.p_yes} if hit is not None and hit.question else {}


def before(item: BeforeCheck, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    first_p, then_p = as_predicate(item.first), as_predicate(item.then)
    cs = item.case_sensitive
    first: TurnMatch | None = None
    for number, turn in conversation.numbered():
        if first is None and turn.role in item.first_roles:
            first = turn_match(first_p, conversation, number, cs)
        then = turn_match(then_p, conversation, number, cs, ask=first is None) \
            if turn.role in item.then_roles else None
        if then is not None:
            if first is not None and (first.turn < then.turn or first.start is None or then.start is None
                                      or first.start <= then.start):
                return _ok(item, sample, first, then)
            return _late(item, sample, then)
        if first is not None:
            # Decisive: A came first. B's first turn is cited when the text shows it (no question asked for it).
            later = next(turn_matches(then_p, conversation, item.then_roles, cs, ask=False), None)
            return _ok(item, sample, first, later)
    return Evidence(item=item.id, passed=True, **worded(sample, "ev_before_never", then=described(item.then)))


def _ok(item: BeforeCheck, sample: Sample, first: TurnMatch, then: TurnMatch | None) -> Evidence:
    wording = (worded(sample, "ev_before_ok", first=said(first), first_turn=first.turn, then=said(then),
                      then_turn=then.turn) if then is not None else
               worded(sample, "ev_before_first", first=said(first), first_turn=first.turn, then=described(item.then)))
    return Evidence(item=item.id, passed=True, turn=first.turn, span=first.span, start=first.start,
                    other_turn=then.turn if then is not None else None, **_question(first), **wording)


def _late(item: BeforeCheck, sample: Sample, then: TurnMatch) -> Evidence:
    conversation = conversation_of(sample)
    # Where A shows up afterwards, if the text says (for the wording only: no question is asked for it).
    first = next((hit for hit in turn_matches(as_predicate(item.first), conversation, item.first_roles,
                                              item.case_sensitive, ask=False) if hit.turn >= then.turn), None)
    wording_said = dict(then_turn=then.turn, then=said(then), first=described(item.first))
    wording = (worded(sample, "ev_before_late", **wording_said, first_turn=first.turn) if first is not None else
               worded(sample, "ev_before_absent", **wording_said))
    return Evidence(item=item.id, passed=False, turn=then.turn, span=then.span, start=then.start,
                    other_turn=first.turn if first is not None else None,
                    missing=[missing_of(item.first)],
                    **_question(then), **wording)
