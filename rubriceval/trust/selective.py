"""Selective scoring with a guarantee (issue 44, item 2): which machine decisions of a scorecard are accepted without
a person, fitted from reviewed decisions — pure functions, reviewed decisions in, regions out (the four-week
simulation calls them as the run does; the store is read by trust/selective_reviews.py).

Per item with a target (`auto_accept` on the item, else the card's; rubric/auto_accept.py), for one judge model:

- a `question:` item: the machine's confidence in a decision is the distance of its p(yes) from the cut-off that
  made it (recorded on the outcome: the item's calibration for this judge, rubric/calibration.py, one made at run
  time from its examples, or 0.5; a decision by drafted evidence ranks above every p(yes)). The accepted region is
  "confidence ≥ threshold", found by fixed-sequence testing over the reviewed decisions (stats/selective.py): the
  largest region whose agreement's one-sided Clopper–Pearson bound at `confidence` is ≥ `agreement`;
- another judge-decided item (a `rubric:` item, a check asking per-turn questions): one band — all its decisions are
  accepted when the bound over all its reviewed decisions reaches the target, else none;
- a deterministic rule (`check:` without questions): one band, accepted unless its reviews show, at the same
  confidence, that it misses the target (the upper bound below it): a rule has no confidence to rank by, and needs no
  reviews to be applied as written, but a reviewed rule that disagrees with people stops being accepted;
- an undecided item is never accepted (it waits for review by itself); N/A and unscored are not decisions to accept.

With no reviews (or too few: 29 all agreeing at 0.9 / 95 %), nothing judge-decided is accepted. Everything outside
its region is marked `pending_review` (scorecard/verdict.py): the total waits (Totals.pending, total_range) and the
item goes to the review queue. Each run refits from every review made before it started, so an item whose reviewed
agreement falls below the target drops out of acceptance on the next run by itself."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from rubriceval.i18n import Message, msg
from rubriceval.rubric.auto_accept import AutoAccept
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.questions import has_turn_questions
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict
from rubriceval.stats.selective import clopper_pearson_lower, clopper_pearson_upper, fixed_sequence, min_reviews

DEFAULT_CUTOFF = 0.5
EVIDENCE_CONFIDENCE = 1.0          # above any |p(yes) − cut-off| (at most 1): evidence-decided decisions rank first
# How an item's decisions are ranked: by confidence (a question's p(yes)), one judged band, or one rule band.
Mode = Literal["confidence", "band", "rule"]
Accepts = Literal["none", "confident", "all"]


class ReviewedDecision(BaseModel):
    """One machine decision (hit or clear) a person reviewed."""

    item: str
    machine_hit: bool
    reviewer_hit: bool                 # the reviewer's hit; clear and N/A are not hits
    confidence: float | None = None    # |p(yes) − cut-off|; None: no p(yes) (rule and rubric items)
    run_id: str = ""
    sample_id: str = ""

    @property
    def agrees(self) -> bool:
        return self.machine_hit == self.reviewer_hit


class Reviewed(Protocol):
    """What a region is fitted on: a reviewed machine decision (a card item's, or a rubric verdict's:
    trust/rubric_selective.py), whether the reviewer agreed, and the machine's confidence (None: it has none)."""

    @property
    def agrees(self) -> bool: ...

    @property
    def confidence(self) -> float | None: ...


class AcceptanceRegion(BaseModel):
    """What one item accepts automatically on one judge, and the evidence: `accepts` none, the decisions with
    confidence ≥ `threshold`, or all; `n`/`agreements` the reviewed decisions inside the region and how many a
    reviewer agreed with, `lower_bound` the agreement guaranteed there (None when nothing is accepted, or a rule
    accepted without reviews), `coverage` the share of reviewed decisions inside."""

    item: str
    judge: str
    mode: Mode
    target: AutoAccept
    accepts: Accepts
    threshold: float | None = None
    n_reviewed: int = 0
    n: int = 0
    agreements: int = 0
    lower_bound: float | None = None
    upper_bound: float | None = None   # rule items: the agreement their reviews still allow
    coverage: float = 0.0
    reason: Message | None = None      # why nothing (or everything, for a rule) is accepted

    def accepted(self, outcome: CardItemOutcome, confidence: float | None) -> bool:
        """Whether this machine decision stands without a person (only hit/clear are decisions to accept)."""
        if outcome.status not in ("hit", "clear"):
            return False
        return self.admits(confidence)

    def admits(self, confidence: float | None) -> bool:
        """Whether a decision of this confidence lies in the region (a card item's, or a rubric verdict's)."""
        if self.accepts == "all":
            return True
        if self.accepts == "confident":
            return confidence is not None and self.threshold is not None and confidence >= self.threshold
        return False


def item_target(card: Scorecard, item: ScorecardItem) -> AutoAccept | None:
    """The item's own target, else the card's."""
    return item.auto_accept or card.auto_accept


def has_targets(card: Scorecard) -> bool:
    return card.auto_accept is not None or any(i.auto_accept is not None for i in card.items)


def item_mode(item: ScorecardItem) -> Mode:
    if item.question is not None:
        return "confidence"
    if item.rubric is not None or has_turn_questions(item):
        return "band"
    return "rule"


def item_cutoff(item: ScorecardItem, judge: str | None) -> float:
    """The cut-off the item's p(yes) is read against on this judge: its calibration for the judge, else 0.5."""
    calibration = item.calibration_for(judge)
    return calibration.cutoff if calibration is not None else DEFAULT_CUTOFF


def decision_confidence(item: ScorecardItem, outcome: CardItemOutcome, judge: str | None) -> float | None:
    """How sure the machine was of a question item's decision: |p(yes) − the cut-off it was read against| — the one
    the outcome records (a calibration made at run time from the item's examples included), else the item's
    calibration for this judge, else 0.5. A decision by drafted evidence (a money amount, another customer's phone:
    scoring/judgement/) ranks first, at EVIDENCE_CONFIDENCE: every region holds it, so reviews that disagree with
    it close the whole item. None without a p(yes)."""
    if item.question is None:
        return None
    if outcome.decided_by == "rule":
        return EVIDENCE_CONFIDENCE
    if outcome.p_yes is None:
        return None
    cutoff = outcome.cutoff if outcome.cutoff is not None else item_cutoff(item, judge)
    return abs(outcome.p_yes - cutoff)


def fit_region(item: str, mode: Mode, reviewed: Iterable[Reviewed], target: AutoAccept,
               judge: str) -> AcceptanceRegion:
    """The acceptance region of one item (or rubric) from its reviewed decisions (module doc)."""
    pairs = list(reviewed)

    def region(**found: Any) -> AcceptanceRegion:
        return AcceptanceRegion(item=item, judge=judge, mode=mode, target=target, n_reviewed=len(pairs), **found)

    if mode == "rule":
        agreed = sum(p.agrees for p in pairs)
        upper = clopper_pearson_upper(agreed, len(pairs), target.confidence) if pairs else None
        if upper is not None and upper < target.agreement:
            return region(accepts="none", n=len(pairs), agreements=agreed, upper_bound=upper,
                          reason=msg("aa_rule_below", agreement=f"{agreed}/{len(pairs)}", upper=f"{upper:.0%}",
                                     target=f"{target.agreement:.0%}"))
        lower = clopper_pearson_lower(agreed, len(pairs), target.confidence) if pairs else None
        return region(accepts="all", n=len(pairs), agreements=agreed, upper_bound=upper,
                      lower_bound=lower if lower is not None and lower >= target.agreement else None,
                      coverage=1.0 if pairs else 0.0, reason=None if pairs else msg("aa_rule_unreviewed"))
    if mode == "confidence":
        ranked = [p for p in pairs if p.confidence is not None]
        fit = fixed_sequence([p.confidence for p in ranked if p.confidence is not None],
                             [p.agrees for p in ranked], target.agreement, target.confidence)
        if fit.threshold is None:
            return region(accepts="none", reason=_nothing_yet(len(ranked), fit.steps, target))
        return region(accepts="confident", threshold=fit.threshold, n=fit.n, agreements=fit.agreements,
                      lower_bound=fit.lower_bound, coverage=fit.coverage)
    agreed = sum(p.agrees for p in pairs)
    lower = clopper_pearson_lower(agreed, len(pairs), target.confidence)
    if len(pairs) < min_reviews(target.agreement, target.confidence) or lower < target.agreement:
        steps = () if len(pairs) < min_reviews(target.agreement, target.confidence) else (lower,)
        return region(accepts="none", reason=_nothing_yet(len(pairs), steps, target))
    return region(accepts="all", n=len(pairs), agreements=agreed, lower_bound=lower, coverage=1.0)


def _nothing_yet(n: int, steps: tuple[object, ...], target: AutoAccept) -> Message:
    needed = min_reviews(target.agreement, target.confidence)
    if not steps:       # no region was even large enough to test
        return msg("aa_cannot_yet", n=n, needed=needed)
    return msg("aa_below_target", n=n, target=f"{target.agreement:.0%}", confidence=f"{target.confidence:.0%}")


def fit_regions(card: Scorecard, reviewed: Mapping[str, Iterable[ReviewedDecision]], judge: str
                ) -> dict[str, AcceptanceRegion]:
    """item id → its region, for every item of the card with a target (card- or item-level)."""
    regions = {}
    for item in card.items:
        target = item_target(card, item)
        if target is not None:
            regions[item.id] = fit_region(item.id, item_mode(item), reviewed.get(item.id, ()), target, judge)
    return regions


def apply_acceptance(card: Scorecard, verdict: ScorecardVerdict, regions: Mapping[str, AcceptanceRegion],
                     judge: str | None) -> ScorecardVerdict:
    """The verdict with every decision outside its item's region marked pending_review, its totals recomputed (the
    total then waits: scorecard/arithmetic.py). Items without a target are left as they are."""
    if not regions:
        return verdict
    items = {i.id: i for i in card.items}
    outcomes, changed = [], False
    for outcome in verdict.outcomes:
        region, item = regions.get(outcome.item), items.get(outcome.item)
        if (region is not None and item is not None and outcome.status in ("hit", "clear")
                and not region.accepted(outcome, decision_confidence(item, outcome, judge))):
            outcome = outcome.model_copy(update={"pending_review": True})
            changed = True
        outcomes.append(outcome)
    if not changed:
        return verdict
    return verdict.model_copy(update={"outcomes": outcomes, "totals": scorecard_total(card, outcomes)})
