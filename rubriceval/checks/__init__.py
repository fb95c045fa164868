"""Deterministic checks, one module per kind. `run_check(item, sample)` dispatches on the item's type; an item with
`turns:` runs its single-turn check on every turn of that role of a conversation; `unless_context` /
`only_if_context` condition a check on the retrieved contexts (per turn: that turn's contexts)."""
from __future__ import annotations

from typing import Callable

from rubriceval.checks.before import before
from rubriceval.checks.context_condition import conditioned
from rubriceval.checks.escalate import escalate_after
from rubriceval.checks.final_turn import final_turn
from rubriceval.checks.first_turn import first_turn
from rubriceval.checks.length import max_length
from rubriceval.checks.links import required_link
from rubriceval.checks.max_count import max_count
from rubriceval.checks.mention import must_mention, must_not_mention
from rubriceval.checks.order import steps_in_order
from rubriceval.checks.per_turn import each_turn
from rubriceval.checks.regex import regex
from rubriceval.checks.turn_answers import NeedAnswer, TurnAnswers, Unanswered, using_answers
from rubriceval.data.sample import Sample
from rubriceval.scoring.verdict import Evidence

CHECKS: dict[str, Callable] = {
    "must_mention": must_mention,
    "must_not_mention": must_not_mention,
    "regex": regex,
    "required_link": required_link,
    "steps_in_order": steps_in_order,
    "max_length": max_length,
    # conversations
    "before": before,
    "max_count": max_count,
    "escalate_after": escalate_after,
    "final_turn": final_turn,
    "first_turn": first_turn,
}


def dispatch_check(item, sample: Sample) -> Evidence:
    """The check's evidence; raises NeedAnswer / Unanswered for a per-turn question it cannot read yet
    (rubriceval/checks/turn_answers.py; rubriceval/scoring/turn_questions.py asks the judge)."""
    check = conditioned(CHECKS[item.type])
    if getattr(item, "turns", None):
        return each_turn(item, sample, check)
    return check(item, sample)


def run_check(item, sample: Sample, knowledge: list[str] | None = None) -> Evidence:
    """The check's evidence without asking the judge: a check whose question is not answered is neither passed nor
    failed (passed None), and its evidence says which question on which turn. `knowledge`: the passages of the
    rubric's knowledge file, which context conditions search after the sample's contexts (as in a run)."""
    try:
        if knowledge is None:
            return dispatch_check(item, sample)
        with using_answers(TurnAnswers(can_ask=False, knowledge=knowledge)):
            return dispatch_check(item, sample)
    except (NeedAnswer, Unanswered) as why:
        reason = getattr(why, "reason", "not asked")
        return Evidence(item=item.id, passed=None, turn=why.turn, question=why.question,
                        detail=f"turn {why.turn}: question not answered ({reason})")
