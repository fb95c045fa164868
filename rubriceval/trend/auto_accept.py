"""Selective scoring across runs (issue 44, item 3): per card item (and rubric) with an `auto_accept` target, run
after run (in the store's order), the coverage (share of decisions accepted automatically), the guaranteed agreement, the reviewed
decisions the region was fitted on and what waited — so a lead sees acceptance grow as reviews accumulate, and an
item whose reviewed agreement fell below the target drop out by itself (`dropped`: it accepted something in the run
before and nothing in this one)."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rubriceval.trust.rubric_selective import acceptances


class AcceptancePoint(BaseModel):
    """One item (or the card, item '') in one run."""

    run_id: str
    run: str                           # the run's name
    scorecard: str
    item: str                          # '' for the card overall
    name: str
    accepts: str                       # none / confident / all ('' for the card)
    coverage: float | None
    guaranteed: float | None           # the agreement guaranteed in the accepted region
    n_reviewed: int
    decisions: int
    pending: int
    undecided: int
    dropped: bool = False              # accepted something in the run before, nothing in this one


def acceptance_trend(runs: Any, scorecard: str | None = None, *, until: str | None = None) -> list[AcceptancePoint]:
    """Every run with a card that states a target, oldest first (up to the run `until`, included): the card's
    figures, then each item's."""
    points: list[AcceptancePoint] = []
    before: dict[tuple[str, str], float] = {}       # (card, item) → the previous run's accepted decisions
    last = runs.run_info(until).created_at if until is not None else None
    for info in runs.list_runs():
        if last is not None and info.created_at > last:
            break
        for card in acceptances(runs, info.run_id):
            if scorecard is not None and card.scorecard != scorecard:
                continue
            if card.kind == "scorecard":          # a rubric is its one row (its item row below)
                points.append(AcceptancePoint(
                    run_id=info.run_id, run=info.name, scorecard=card.scorecard, item="", name=card.name, accepts="",
                    coverage=card.coverage, guaranteed=card.guaranteed, n_reviewed=card.n_reviewed,
                    decisions=card.decisions, pending=card.pending, undecided=card.undecided))
            for row in card.items:
                key = (card.scorecard, row.item)
                points.append(AcceptancePoint(
                    run_id=info.run_id, run=info.name, scorecard=card.scorecard, item=row.item, name=row.name,
                    accepts=row.region.accepts, coverage=row.coverage,
                    guaranteed=row.region.lower_bound if row.accepted else None,
                    n_reviewed=row.region.n_reviewed, decisions=row.decisions, pending=row.pending,
                    undecided=row.undecided, dropped=before.get(key, 0) > 0 and row.accepted == 0))
                before[key] = row.accepted
    return points
