"""Deterministic checks, one module per kind. `run_check(item, sample)` dispatches on the item's type; an item with
`turns:` runs its single-turn check on every turn of that role of a conversation; `unless_context` /
`only_if_context` condition a check on the retrieved contexts (per turn: that turn's contexts). Which function runs
which kind is the check-kind registry's (rubriceval/rubric/check_kinds.py): CHECKS is derived from it."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from rubriceval.checks.context_condition import conditioned
from rubriceval.checks.per_turn import each_turn
from rubriceval.checks.turn_answers import NeedAnswer, TurnAnswers, Unanswered, using_answers
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.rubric.items import CHECK_KINDS


def resolve(path: str) -> Callable[..., Any]:
    """A registered kind's "module:function" (rubriceval/rubric/check_kinds.py) as the function itself."""
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


# Every registered kind's run function and, where it lists them, its occurrences: derived from the registry.
CHECKS: dict[str, Callable[..., Evidence]] = {name: resolve(kind.run) for name, kind in CHECK_KINDS.items()}
OCCURRENCES: dict[str, Callable[..., list[Evidence]]] = {
    name: resolve(kind.occurrences) for name, kind in CHECK_KINDS.items() if kind.occurrences}


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
