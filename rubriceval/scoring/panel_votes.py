"""What a judge panel leaves in a verdict (Verdict.details['panel']): each judge's vote, readable without loading
the panel's judges (reports and agreement statistics read votes; only scoring/panel.py makes them)."""
from __future__ import annotations

from pydantic import BaseModel, field_serializer

from rubriceval.core.verdict import Usage, Verdict

# The run's own judge among a run's judges (it judges the standard metrics; without a panel, everything): the name
# the Batch API's endpoints and the reports' per-judge costs give it beside the panel judges' names.
RUN_JUDGE = ""

DETAILS_KEY = "panel"
# What a vote keeps of its judge's usage: the counts the reports price at the judge's own prices (report/cost.py),
# non-zero ones only (a panel of three on a million rows stores three per row); no latency, which would make two
# identical runs' verdicts differ.
VOTE_USAGE = {"calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd"}


class PanelVote(BaseModel):
    """One judge's verdict on one (sample, rubric)."""

    judge: str
    model: str
    score: float | None = None
    passed: bool | None = None
    unscored_kind: str | None = None
    reason: str | None = None
    feedback: str = ""
    # What this judge's calls spent (priced at its own prices in the reports); None in runs stored before it was kept.
    usage: Usage | None = None

    @field_serializer("usage")
    def _compact_usage(self, usage: Usage | None) -> dict | None:
        return None if usage is None else {k: v for k, v in usage.model_dump(include=VOTE_USAGE).items() if v}


def panel_votes(verdict: Verdict) -> list[PanelVote] | None:
    """Each judge's verdict on this row, or None when it was not judged by a panel."""
    info = verdict.details.get(DETAILS_KEY)
    if not isinstance(info, dict) or not isinstance(info.get("judges"), list):
        return None
    return [PanelVote.model_validate(v) for v in info["judges"]]
