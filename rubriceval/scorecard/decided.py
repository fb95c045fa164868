"""How one item of one verdict was decided, in one word every surface counts by (issue 39): `rule` (a deterministic
check), `rubric` (a referenced rubric's score), `judge` (the judge's p(yes) against a plain 0.5), `judge_calibrated`
(against a cut-off calibrated for this judge), `checker` (a turn checker's probability against its fitted cut-off,
scoring/judgement/turn_checker.py), `undecided` (the judge answered but cannot tell), `pending` (a machine
decision not accepted automatically, issue 44), or `not_applicable` / `unscored`.

A verdict stored before `decided_by` was recorded says nothing of it: its hit or clear is read from the item's kind
(a check without per-turn questions by rule, a rubric item by the rubric, anything else by the judge at 0.5: there
was no calibrated cut-off before)."""
from __future__ import annotations

from typing import Literal

from rubriceval.scorecard.questions import asks_judge, has_turn_questions
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.scorecard.verdict import CardItemOutcome

How = Literal["rule", "rubric", "judge", "judge_calibrated", "checker", "undecided", "pending", "not_applicable",
              "unscored"]
HOW: tuple[How, ...] = ("rule", "judge", "judge_calibrated", "checker", "rubric", "undecided", "pending",
                        "not_applicable", "unscored")
WAITING: tuple[How, ...] = ("undecided", "pending")


def is_judgement_item(item: ScorecardItem) -> bool:
    """An item the judge may decide (a question, a rubric, a check asking per-turn questions): the items whose
    decision the reports break down by how it was made."""
    return item.rubric is not None or asks_judge(item)


def how_decided(item: ScorecardItem | None, outcome: CardItemOutcome) -> How:
    if outcome.status == "undecided":
        return "undecided"
    if outcome.awaiting_review:
        return "pending"
    if outcome.status in ("not_applicable", "unscored"):
        return outcome.status
    if outcome.decided_by is not None:
        return outcome.decided_by
    if item is None:
        return "rule"
    if item.rubric is not None:
        return "rubric"
    return "judge" if item.question or has_turn_questions(item) else "rule"


def how_counts(card: Scorecard, outcomes_of: list[list[CardItemOutcome]]) -> dict[str, dict[How, int]]:
    """Judgement item id → how many of these verdicts' outcomes were decided each way (every item of the card with a
    judgement predicate, in the card's order; an item no verdict reached counts nothing)."""
    items = {i.id: i for i in card.items if is_judgement_item(i)}
    counts: dict[str, dict[How, int]] = {i: {h: 0 for h in HOW} for i in items}
    for outcomes in outcomes_of:
        for o in outcomes:
            if o.item in items:
                counts[o.item][how_decided(items[o.item], o)] += 1
    return counts
