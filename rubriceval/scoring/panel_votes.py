"""What a judge panel leaves in a verdict (Verdict.details['panel']): each judge's vote, readable without loading
the panel's judges (reports and agreement statistics read votes; only scoring/panel.py makes them)."""
from __future__ import annotations

from pydantic import BaseModel

from rubriceval.verdict import Verdict

DETAILS_KEY = "panel"


class PanelVote(BaseModel):
    """One judge's verdict on one (sample, rubric)."""

    judge: str
    model: str
    score: float | None = None
    passed: bool | None = None
    unscored_kind: str | None = None
    reason: str | None = None
    feedback: str = ""


def panel_votes(verdict: Verdict) -> list[PanelVote] | None:
    """Each judge's verdict on this row, or None when it was not judged by a panel."""
    info = verdict.details.get(DETAILS_KEY)
    if not isinstance(info, dict) or not isinstance(info.get("judges"), list):
        return None
    return [PanelVote.model_validate(v) for v in info["judges"]]
