"""Official scorecard totals (issue 27): a human decision on a conversation's scorecard verdict — an accepted appeal
against one deduction, say — gives the official total, derived at read time (rubriceval/store/official.py); the
stored verdict is never rewritten.

Registered with the official-score module on import: which items of a scorecard verdict are deductions (its hit
items with negative points) and the total once some are removed (those items counted as clear, then the scorecard's
own arithmetic: caps, dimension limits, clamp, fatal). Reports, gate and compare read `official_verdicts`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.schema import Scorecard
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


def with_decision(card: Scorecard, verdict: ScorecardVerdict, decision: HumanDecision | None) -> ScorecardVerdict:
    """The verdict as reports count it: an appeal that removed one deduction shows that item clear (when its total
    is the decided one); any other decision sets the total, the items kept as the machine found them."""
    if decision is None:
        return verdict
    if decision.item:
        cleared = without(card, verdict, [decision.item])
        if cleared.totals.total == decision.score:
            return cleared
    totals = verdict.totals.model_copy(update={"total": int(decision.score), "unscored_reason": None})
    return verdict.model_copy(update={"totals": totals})


def official_verdicts(runs: Any, run: str, card_id: str | None = None, *, machine_only: bool = False
                      ) -> list[ScorecardVerdict]:
    """ScorecardStore.verdicts with every human decision applied (machine_only: as stored)."""
    from rubriceval.scorecard.store import ScorecardStore

    store = ScorecardStore(runs)
    verdicts = store.verdicts(run, card_id)
    if machine_only or not verdicts:
        return verdicts
    official = OfficialScores.load(runs.conn, runs.resolve(run))
    if not official:
        return verdicts
    cards = {c.id: c for c in store.cards(run)}
    return [with_decision(cards[v.scorecard], v, official.decision(v.sample_id, v.scorecard))
            if v.scorecard in cards else v for v in verdicts]
