"""Official scorecard totals (issue 27): reviewers' item decisions (a rejected deduction, a missed one added:
scorecard/reviews.py) and human decisions on a conversation's verdict (an accepted appeal against one deduction, a
lead's total) give the official total, derived at read time (rubriceval/store/official.py); the stored verdict is
never rewritten.

Registered with the official-score module on import: which items of a scorecard verdict are deductions (its hit
items with negative points) and the total once some are removed (those items counted as clear, then the scorecard's
own arithmetic: caps, dimension limits, clamp, fatal). Reports, gate and compare read `official_verdicts`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.reviews import Review, ReviewStore, reviewed_outcomes
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.store import ScorecardStore
from rubriceval.scorecard.verdict import ScorecardVerdict
from rubriceval.store.official import HumanDecision, OfficialScores, register_deductions, register_recompute

KIND = "scorecard"


def scorecard_deductions(details: Mapping[str, Any]) -> list[str]:
    return [p["item"] for p in (details.get("totals") or {}).get("items") or [] if (p.get("points") or 0) < 0]


def without(card: Scorecard, verdict: ScorecardVerdict, removed: Sequence[str]) -> ScorecardVerdict:
    """The verdict with the removed items counted as clear, its totals recomputed."""
    outcomes = [o.model_copy(update={"status": "clear", "occurrences": 0}) if o.item in removed else o
                for o in verdict.outcomes]
    return verdict.model_copy(update={"outcomes": outcomes, "totals": scorecard_total(card, outcomes)})


def _recompute(definition: Mapping[str, Any], details: Mapping[str, Any], removed: Sequence[str]) -> float | None:
    card, verdict = Scorecard.model_validate(definition), ScorecardVerdict.model_validate(details)
    total = without(card, verdict, removed).totals.total
    return None if total is None else float(total)


register_recompute(KIND, _recompute)
register_deductions(KIND, scorecard_deductions)


def with_decision(card: Scorecard, verdict: ScorecardVerdict, decision: HumanDecision | None,
                  reviews: Sequence[Review] = ()) -> ScorecardVerdict:
    """The verdict as reports count it. Reviewers' item decisions first (scorecard/reviews.py: a rejected hit is
    clear, a missed one a hit), the total recomputed; then an appeal that removed one deduction clears that item too
    (when the decided score is the total without it), and any other decision sets the total — unless a reviewer's
    item decision came after it."""
    if reviews:
        outcomes = reviewed_outcomes(verdict, reviews)
        reviewed = verdict.model_copy(update={"outcomes": outcomes, "totals": scorecard_total(card, outcomes)})
    else:
        reviewed = verdict
    if decision is None:
        return reviewed
    if decision.item and without(card, verdict, [decision.item]).totals.total == decision.score:
        return without(card, reviewed, [decision.item])
    if reviews and max(r.created_at for r in reviews) > decision.at:
        return reviewed
    totals = reviewed.totals.model_copy(update={"total": int(decision.score), "unscored_reason": None})
    return reviewed.model_copy(update={"totals": totals})


def official_verdicts(runs: Any, run: str, card_id: str | None = None, *, machine_only: bool = False
                      ) -> list[ScorecardVerdict]:
    """ScorecardStore.verdicts with every human decision applied (machine_only: as stored)."""
    store = ScorecardStore(runs)
    verdicts = store.verdicts(run, card_id)
    if machine_only or not verdicts:
        return verdicts
    official = OfficialScores.load(runs.conn, runs.resolve(run))
    reviews: dict[tuple[str, str], list[Review]] = {}
    for review in ReviewStore(runs).reviews(run, card_id):
        reviews.setdefault((review.sample_id, review.scorecard), []).append(review)
    if not official and not reviews:
        return verdicts
    cards = {c.id: c for c in store.cards(run)}
    return [with_decision(cards[v.scorecard], v, official.decision(v.sample_id, v.scorecard),
                          [r for r in reviews.get((v.sample_id, v.scorecard), []) if r.version == v.version])
            if v.scorecard in cards else v for v in verdicts]
