"""Which items of a task go to the lead: an expert said unsure, two experts are ≥ 2 points apart, or they split on
pass/fail (one at or above the rubric's threshold, one below). One rule, used by the store and the app."""
from __future__ import annotations

from collections.abc import Sequence

from rubriceval.store.team_models import DISAGREEMENT_GAP, Opinion, Route


def route(opinions: Sequence[Opinion], threshold: float) -> Route | None:
    """Why this item needs the lead, or None while the experts' scores agree (or fewer than two are in)."""
    if any(o.state == "unsure" for o in opinions):
        return "unsure"
    scores = [o.score for o in opinions if o.state == "scored" and o.score is not None]
    if len(scores) < 2:
        return None
    if max(scores) - min(scores) >= DISAGREEMENT_GAP:
        return "disagreement"
    passed = {score >= threshold for score in scores}
    return "pass_fail" if len(passed) == 2 else None
