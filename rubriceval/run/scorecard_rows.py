"""A run's scorecard verdicts as per-row results (`rubriceval run --out`): a row per conversation × item, then the
conversation's total, in the columns of the rubric rows (`scorer` is `scorecard:ID`, `score` the item's signed
points or the total) plus the card's own: item, item name, dimension, status, fatal, how the item was decided
(`decided_by`: rule, judge, judge_calibrated, rubric …) and, for a total, `total_range`. An item awaiting review has
status `undecided` or `pending_review` and no score; a total awaiting review has status `awaiting_review`, no score
(never counted as if decided) and the range the reviewer's decisions can still give it (issues 39, 44)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

CARD_COLUMNS = ["item", "item_name", "dimension", "status", "fatal", "decided_by", "total_range"]
TOTAL_ITEM = "total"


def scorecard_records(runs: Any, run_id: str) -> Iterator[dict[str, Any]]:
    """Every stored scorecard verdict of the run (each card's own version), item rows then the total row."""
    from rubriceval.scorecard.decided import how_decided
    from rubriceval.store.scorecards import ScorecardStore

    store = ScorecardStore(runs)
    for card in store.cards(run_id):
        items = {i.id: i for i in card.items}
        for verdict in store.verdicts(run_id, card.id):
            if verdict.version != card.version_tag:
                continue
            points = {p.item: p.points for p in verdict.totals.items}
            base = {"sample_id": verdict.sample_id, "scorer": f"scorecard:{card.id}", "kind": "scorecard",
                    "scorer_version": verdict.version}
            for outcome in verdict.outcomes:
                item = items.get(outcome.item)
                scored = outcome.status not in ("not_applicable", "unscored") and not outcome.awaiting_review
                status = "pending_review" if outcome.awaiting_review and outcome.status != "undecided" else \
                    outcome.status
                yield {**base, "item": outcome.item, "item_name": item.label if item else outcome.item,
                       "dimension": item.dimension if item else "", "status": status,
                       "decided_by": how_decided(item, outcome) if scored else None,
                       "fatal": outcome.item in verdict.totals.fatal,
                       "score": points.get(outcome.item, 0) if scored else None,
                       "unscored_reason": outcome.reason if outcome.status == "unscored" or (
                           outcome.status == "not_applicable") else None,
                       "evidence": "; ".join(e.detail for e in outcome.evidence)}
            total = verdict.totals
            yield {**base, "item": TOTAL_ITEM, "item_name": card.name, "dimension": "", "status":
                   "awaiting_review" if total.awaiting_review else "unscored" if total.total is None else "scored",
                   "fatal": bool(total.fatal), "score": total.total,
                   "total_range": None if total.total_range is None else f"{total.total_range[0]}–{total.total_range[1]}",
                   "unscored_reason": total.unscored_reason,
                   "evidence": ", ".join(total.fatal),
                   **{f"usage_{k}": val for k, val in verdict.usage.model_dump().items()}}
