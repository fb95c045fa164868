"""Items awaiting review (issue 39: undecided; issue 44: a machine decision pending review): the total is never a
number counted as if decided. It is None, names the waiting items and gives the range the reviewer can still reach."""
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.verdict import CardItemOutcome
from tests.scorecard.test_scorecard import CARD, card, outcomes


def _with(base: list[CardItemOutcome], item: str, **update) -> list[CardItemOutcome]:
    return [o.model_copy(update=update) if o.item == item else o for o in base]


def test_an_undecided_deduction_leaves_the_total_waiting_with_its_range():
    totals = scorecard_total(card(), outcomes(extra="undecided"))
    assert totals.total is None and totals.awaiting_review and not totals.scored
    assert totals.undecided == ["extra"] and totals.pending == [] and totals.unscored == []
    assert totals.total_range == (92, 100)          # −8 if the reviewer finds it, nothing if not
    assert totals.unscored_reason is None
    assert next(p for p in totals.items if p.item == "extra").points == 0


def test_an_undecided_fatal_item_ranges_down_to_zero_and_a_decided_fatal_hit_still_zeroes():
    assert scorecard_total(card(), outcomes(secret="undecided")).total_range == (0, 100)
    totals = scorecard_total(card(), outcomes(secret="hit", extra="undecided"))
    assert totals.total == 0 and totals.fatal == ["secret"] and not totals.awaiting_review


def test_a_waiting_bonus_ranges_up_and_dimension_limits_hold_at_both_ends():
    totals = scorecard_total(card(), outcomes(bonus="undecided", greet="hit"))
    assert totals.total_range == (97, 100)          # the care bonus is held at +3, the total at the base
    totals = scorecard_total(card(), outcomes(extra="undecided", greet="hit", long=("hit", 3)))
    assert totals.total_range == (90, 91)           # service is held at −10 whatever the reviewer decides


def test_a_pending_machine_decision_waits_like_an_undecided_item_but_keeps_its_lean():
    base = _with(outcomes(extra="hit"), "extra", pending_review=True)
    totals = scorecard_total(card(), base)
    assert totals.total is None and totals.pending == ["extra"] and totals.undecided == []
    assert totals.total_range == (92, 100)
    assert next(o for o in base if o.item == "extra").status == "hit"       # the lean is kept for the queue
    accepted = scorecard_total(card(), _with(base, "extra", pending_review=False))
    assert accepted.total == 92


def test_unscored_beats_waiting_and_is_reported_as_unscored():
    totals = scorecard_total(card(), outcomes(extra="undecided", greet="unscored"))
    assert totals.total is None and totals.unscored == ["greet"] and not totals.awaiting_review
    assert "unscored" in (totals.unscored_reason or "")


def test_every_item_of_the_test_card_can_wait():
    for item in CARD["items"]:
        totals = scorecard_total(card(), outcomes(**{item["id"]: "undecided"}))
        low, high = totals.total_range
        assert 0 <= low <= high <= 100 and totals.undecided == [item["id"]]
