"""`auto_accept: {agreement: 0.9, confidence: 0.95}` (issue 44): the target a lead states for accepting the machine's
decisions without a person — the agreement with reviewers that must be guaranteed, and how sure that guarantee must
be. Written on a scorecard (every item), on one of its items (that item's own), or on a rubric.

What it does is the trust layer's (trust/selective.py): from the reviewed decisions of earlier runs with the same
judge, the confidence region where the agreement's one-sided Clopper–Pearson bound at `confidence` is at least
`agreement` (fixed-sequence testing); decisions inside are accepted, the rest wait for review (pending_review).

Below the rubric and scorecard layers, so both schemas share it. Left out of the version hash: the target changes
which decisions wait for a person, never a decision itself (reviews keep counting for the version)."""
from __future__ import annotations

from pydantic import Field

from rubriceval.rubric.strict import StrictModel


class AutoAccept(StrictModel):
    """The guarantee asked for: agreement with reviewers ≥ `agreement`, with probability ≥ `confidence`."""

    agreement: float = Field(gt=0.5, lt=1)
    confidence: float = Field(default=0.95, ge=0.5, lt=1)
