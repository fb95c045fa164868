"""Official scorecard totals (issue 27): reviewers' item decisions (a rejected deduction, a missed one added:
audit/scorecard_reviews.py) and human decisions on a conversation's verdict (an accepted appeal against one deduction, a
lead's total) give the official total, derived at read time (rubriceval/audit/official.py); the stored verdict is
never rewritten.

Registered with the official-score module on import: which items of a scorecard verdict are deductions (its hit
items with negative points) and the total once some are removed (those items counted as clear, then the scorecard's
own arithmetic: caps, dimension limits, clamp, fatal). Reports, gate and compare read `official_pairs` (each
verdict with whether a person changed it); readers that stream stored totals (segments, trend) `decided_verdicts`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rubriceval.audit.official import HumanDecision, OfficialScores, register_deductions, register_recompute
from rubriceval.audit.scorecard_reviews import Review, ReviewStore, reviewed_outcomes
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import ScorecardVerdict
from rubriceval.store.scorecards import ScorecardStore

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
    """The verdict as reports count it. Reviewers' item decisions first (audit/scorecard_reviews.py: a rejected hit is
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


def _reviews_by_verdict(runs: Any, run: str, card_id: str | None = None) -> dict[tuple[str, str], list[Review]]:
    out: dict[tuple[str, str], list[Review]] = {}
    for review in ReviewStore(runs).reviews(run, card_id):
        out.setdefault((review.sample_id, review.scorecard), []).append(review)
    return out


def _official(cards: dict[str, Scorecard], v: ScorecardVerdict, official: OfficialScores,
              reviews: dict[tuple[str, str], list[Review]]) -> tuple[ScorecardVerdict, bool]:
    """The verdict as reports count it, and whether a person changed it (a decision, or a reviewer's item
    decision on this version)."""
    if v.scorecard not in cards:
        return v, False
    decision = official.decision(v.sample_id, v.scorecard)
    mine = [r for r in reviews.get((v.sample_id, v.scorecard), []) if r.version == v.version]
    return with_decision(cards[v.scorecard], v, decision, mine), bool(decision is not None or mine)


def official_pairs(runs: Any, run: str, card_id: str | None = None, *, machine_only: bool = False
                   ) -> list[tuple[ScorecardVerdict, bool]]:
    """(official verdict, whether a person changed it) per stored verdict, in dataset order."""
    store = ScorecardStore(runs)
    verdicts = store.verdicts(run, card_id)
    if machine_only or not verdicts:
        return [(v, False) for v in verdicts]
    official = OfficialScores.load(runs.conn, runs.resolve(run))
    reviews = _reviews_by_verdict(runs, run, card_id)
    if not official and not reviews:
        return [(v, False) for v in verdicts]
    cards = {c.id: c for c in store.cards(run)}
    return [_official(cards, v, official, reviews) for v in verdicts]


def decided_verdicts(runs: Any, run_id: str, official: OfficialScores | None = None
                     ) -> dict[tuple[str, str], ScorecardVerdict]:
    """(sample id, scorecard) → the official verdict, for only the verdicts a person changed: what readers that
    stream the stored totals (segments, trend) put in their place — every other verdict is read as stored."""
    store = ScorecardStore(runs)
    official = official if official is not None else OfficialScores.load(runs.conn, run_id)
    reviews = _reviews_by_verdict(runs, run_id)
    with runs.lock:
        ids = {r[0] for r in runs.conn.execute("SELECT scorecard FROM scorecard_defs WHERE run_id = ?", (run_id,))}
    keys = sorted({k for k in official.decisions if k[1] in ids} | set(reviews))
    out: dict[tuple[str, str], ScorecardVerdict] = {}
    if not keys:                      # nothing a person changed: the definitions are not even read
        return out
    cards = {c.id: c for c in store.cards(run_id)}
    for start in range(0, len(keys), 500):
        part = set(keys[start:start + 500])
        ids = sorted({sample_id for sample_id, _ in part})
        with runs.lock:
            rows = runs.conn.execute(
                "SELECT verdict_json FROM scorecard_verdicts WHERE run_id = ? AND sample_id IN "
                f"({','.join('?' * len(ids))})", (run_id, *ids)).fetchall()
        for row in rows:
            v = ScorecardVerdict.model_validate_json(row[0])
            if (v.sample_id, v.scorecard) in part:
                verdict, changed = _official(cards, v, official, reviews)
                if changed:
                    out[(v.sample_id, v.scorecard)] = verdict
    return out
