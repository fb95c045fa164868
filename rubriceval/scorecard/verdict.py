"""A scorecard verdict: every item's outcome (hit / clear / N/A / unscored, with its evidence) and the totals those
outcomes make (rubriceval/scorecard/arithmetic.py). Stored one per conversation (or single-turn sample)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Evidence, Usage

Status = Literal["hit", "clear", "not_applicable", "unscored", "undecided"]
# How an item's hit/clear was reached: a deterministic rule (check), a referenced rubric's score, the judge's p(yes)
# against a plain 0.5, or against a cut-off calibrated for this judge (issue 39). An undecided item has none.
DecidedBy = Literal["rule", "rubric", "judge", "judge_calibrated", "checker"]


class CardItemOutcome(BaseModel):
    """What one scorecard item found in one conversation (hit, clear, not applicable, unscored or undecided; a rubric
    judge item's score is scoring's JudgeItemOutcome). `undecided`: the judge was asked and answered, but cannot tell
    on this item (its calibration or its own examples say so): never counted as clear, routed to review. `unscored`:
    no answer at all (provider error, parse failure, …). `occurrences` counts failing turns of a per-occurrence item (1 for
    any other hit, 0 when not hit). `evidence`: the check's spans with their turn numbers, the judge's answer with
    p(yes), or the referenced rubric's score and feedback."""

    item: str
    status: Status
    occurrences: int = Field(default=0, ge=0)
    evidence: list[Evidence] = Field(default_factory=list)
    reason: str = ""                   # why N/A or unscored, in words
    p_yes: float | None = None         # question items answered with logprobs
    decided_by: DecidedBy | None = None
    # The cut-off a judge's hit/clear read p_yes against (its calibration's, one made at run time, or 0.5): how sure
    # the machine was is |p_yes − cutoff| (issue 44's acceptance regions). None: not a judge's p(yes) decision.
    cutoff: float | None = None
    # What p_yes is: the judge's p(yes) of the whole question, the highest over the turns asked, or a turn checker's
    # stacked probability (scoring/judgement/turn_checker.py) — a cut-off fitted from reviews is read on the same one.
    score_kind: Literal["p_yes", "turn_max", "checker"] | None = None
    # A machine decision (hit/clear) that is not accepted automatically (issue 44's auto_accept target): it waits
    # for a reviewer like an undecided item, keeping the machine's lean for the queue and the provisional range.
    pending_review: bool = False

    @property
    def awaiting_review(self) -> bool:
        """No decision the totals may count yet: undecided, or a machine decision pending review."""
        return self.status == "undecided" or (self.pending_review and self.status in ("hit", "clear"))


class ItemPoints(BaseModel):
    item: str
    dimension: str
    points: int                        # signed: −20 a deduction, +2 a bonus, 0 not hit
    occurrences: int = 0
    capped: bool = False               # a per-occurrence item stopped at its cap


class DimensionTotal(BaseModel):
    dimension: str
    points: int                        # the subtotal after the dimension's limits
    raw: int                           # the sum of its items before them
    clamped: bool = False


class Totals(BaseModel):
    """The conversation's total: base + subtotals clamped to [0, base] (`clamped` says so), 0 when a fatal item is
    hit, None (unscored, with `unscored_reason`) when an item that counts could not be scored, None (awaiting review,
    `undecided`/`pending` with the `total_range` it can still reach) when an item waits for a reviewer."""

    base: int
    total: int | None = None
    raw_total: int | None = None
    clamped: bool = False
    fatal: list[str] = Field(default_factory=list)
    unscored: list[str] = Field(default_factory=list)
    not_applicable: list[str] = Field(default_factory=list)
    unscored_reason: str | None = None
    undecided: list[str] = Field(default_factory=list)   # items the judge could not tell
    pending: list[str] = Field(default_factory=list)     # machine decisions not accepted automatically
    total_range: tuple[int, int] | None = None           # (lowest, highest) total the waiting items allow
    items: list[ItemPoints] = Field(default_factory=list)
    dimensions: list[DimensionTotal] = Field(default_factory=list)

    @property
    def scored(self) -> bool:
        return self.total is not None

    @property
    def awaiting_review(self) -> bool:
        """The total waits for a reviewer (not unscored: the judge answered, nobody may count it yet)."""
        return self.total is None and bool(self.undecided or self.pending) and not self.unscored


class ScorecardVerdict(BaseModel):
    run_id: str = ""
    sample_id: str
    scorecard: str                     # the scorecard id
    version: str                       # its version tag (v1@hash)
    outcomes: list[CardItemOutcome]
    totals: Totals
    usage: Usage = Field(default_factory=Usage)

    def outcome(self, item_id: str) -> CardItemOutcome:
        return next(o for o in self.outcomes if o.item == item_id)
