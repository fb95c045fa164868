"""A run's scorecard verdicts as per-row results (`rubriceval run --out`): a row per conversation × item, then the
conversation's total, in the columns of the rubric rows (`scorer` is `scorecard:ID`, `score` the item's signed
points or the total) plus the card's own: item, item name, dimension, status, fatal."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

CARD_COLUMNS = ["item", "item_name", "dimension", "status", "fatal"]
TOTAL_ITEM = "total"


def scorecard_records(runs: Any, run_id: str) -> Iterator[dict[str, Any]]:
    """Every stored scorecard verdict of the run (each card's own version), item rows then the total row."""
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
                scored = outcome.status not in ("not_applicable", "unscored")
                yield {**base, "item": outcome.item, "item_name": item.label if item else outcome.item,
                       "dimension": item.dimension if item else "", "status": outcome.status,
                       "fatal": outcome.item in verdict.totals.fatal,
                       "score": points.get(outcome.item, 0) if scored else None,
                       "unscored_reason": outcome.reason if not scored else None,
                       "evidence": "; ".join(e.detail for e in outcome.evidence)}
            total = verdict.totals
            yield {**base, "item": TOTAL_ITEM, "item_name": card.name, "dimension": "", "status":
                   "unscored" if total.total is None else "scored", "fatal": bool(total.fatal), "score": total.total,
                   "unscored_reason": total.unscored_reason,
                   "evidence": ", ".join(total.fatal),
                   **{f"usage_{k}": val for k, val in verdict.usage.model_dump().items()}}
