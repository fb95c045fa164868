"""Several judgements of one sample → one verdict. Shared by self-consistency (n sampled calls of one judge,
`rubriceval/trust/self_consistency.py`) and the judge panel (one call per judge, `rubriceval/scoring/panel.py`).

The rules, in order:

1. **Enough judgements.** At least `min_scored` of the n judgements must be scored (both callers default to a
   majority, n // 2 + 1); otherwise the verdict is unscored, saying how many were scored and the first failure.
   Unscored judgements are counted (`n_unscored`, `unscored_reasons`), never read as a score.
2. **Score = median** of the scored judgements, rounded half up (3.5 → 4), as rubric scores always are.
3. **Pass/fail = majority** of the scored judgements' votes (score ≥ threshold). A tied vote (even count) goes to
   the rounded median. Whenever a strict majority exists it agrees with the rounded median — more than half the
   scores at or above the threshold puts both middle scores there — so `passed` never contradicts `score`.
4. **Disagreement**: the scored judgements span `DISAGREEMENT_SPREAD` (2) levels or more, or their pass/fail votes
   split. The audit queue's "uncertain_first" order puts these first (`rubriceval/store/audit_queue.py`).
5. **The text matches the number**: feedback and evidence are those of the first judgement that gave the final
   score; when none did (an even split), the closest one, its feedback marked as such.
"""
from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from rubriceval.core.verdict import Usage, Verdict
from rubriceval.scoring.combine import round_half_up
from rubriceval.scoring.panel_votes import DETAILS_KEY as PANEL_KEY

DISAGREEMENT_SPREAD = 2.0


class Consensus(BaseModel):
    """What the n judgements said; stored in Verdict.details under the caller's key."""

    n: int                          # judgements asked for
    scores: list[float] = Field(default_factory=list)   # the scored judgements' scores, in the order asked
    n_unscored: int = 0
    unscored_reasons: list[str] = Field(default_factory=list)
    median: float | None = None     # median of the scored judgements (may be x.5 with an even count)
    spread: float | None = None     # max − min of the scored judgements: 0 = fully consistent
    stdev: float | None = None      # population standard deviation of the scored judgements
    agreement: float | None = None  # share of scored judgements equal to the final score
    pass_votes: int | None = None   # scored judgements at or above the threshold
    disagreement: bool = False      # spread ≥ DISAGREEMENT_SPREAD, or the pass/fail votes split


# Where a verdict's details keep its several judgements, each a Consensus (plus the caller's own fields):
# self-consistency's (trust/self_consistency.py) and a judge panel's (scoring/panel_votes.py).
SELF_CONSISTENCY_KEY = "self_consistency"
CONSENSUS_KEYS = (SELF_CONSISTENCY_KEY, PANEL_KEY)


def stored_consensus(details: Mapping[str, Any] | None) -> Consensus | None:
    """The several judgements behind a verdict, read back typed from its details (what audit/ reads them through);
    None when it was judged once, or the entry is not a Consensus."""
    for key in CONSENSUS_KEYS:
        stored = (details or {}).get(key)
        if isinstance(stored, dict):
            try:
                return Consensus.model_validate(stored)
            except ValidationError:
                return None
    return None


def summarize_scores(scores: Sequence[float]) -> tuple[float, float, float]:
    """(median, spread, population stdev) of at least one score."""
    if not scores:
        raise ValueError("no scores to summarize")
    return float(statistics.median(scores)), float(max(scores) - min(scores)), float(statistics.pstdev(scores))


def majority_pass(pass_votes: int, n_votes: int, final: int, threshold: float) -> bool:
    """The majority of pass/fail votes; a tie goes to the rounded median (`final ≥ threshold`)."""
    if 2 * pass_votes != n_votes:
        return 2 * pass_votes > n_votes
    return final >= threshold


def is_disagreement(scores: Sequence[float], threshold: float | None) -> bool:
    """The judgements span two levels or more, or some pass and some fail."""
    if not scores:
        return False
    if max(scores) - min(scores) >= DISAGREEMENT_SPREAD:
        return True
    if threshold is None:
        return False
    votes = {s >= threshold for s in scores}
    return len(votes) > 1


def default_min_scored(n: int) -> int:
    """A majority of the n judgements."""
    return n // 2 + 1


def consensus_verdict(verdicts: Sequence[Verdict], info: Consensus, *, threshold: float | None, min_scored: int,
                      details_key: str, label: str, extra_details: dict[str, Any] | None = None) -> Verdict:
    """One verdict from n verdicts of the same (sample, rubric); `info` (a Consensus or a subclass with the caller's
    own fields) is filled in and stored in `details[details_key]`. `label` names the judgements in messages
    ("self-consistency calls", "panel judges")."""
    usage = sum((v.usage for v in verdicts), Usage())
    scored = [v for v in verdicts if v.score is not None]
    unscored = [v for v in verdicts if v.score is None]
    info.scores = [float(v.score) for v in scored if v.score is not None]     # all of them: the filter narrows
    info.n_unscored = len(unscored)
    info.unscored_reasons = [v.unscored_reason or "" for v in unscored]
    extra = dict(extra_details or {})
    if len(scored) < min_scored:
        # Too few answers to call it a consensus: say so rather than report one lucky judgement as the median.
        kind = Counter(v.unscored_kind for v in unscored).most_common(1)[0][0] if unscored else "error"
        first = unscored[0] if unscored else verdicts[0]
        return first.model_copy(update={
            "score": None, "passed": None, "unscored_kind": kind, "usage": usage,
            "unscored_reason": f"only {len(scored)} of {info.n} {label} were scored (at least {min_scored} needed);"
                               f" first failure: {first.unscored_reason}",
            "details": {**first.details, details_key: info.model_dump(), **extra}})
    info.median, info.spread, info.stdev = summarize_scores(info.scores)
    final = round_half_up(info.median)
    info.agreement = sum(1 for s in info.scores if s == final) / len(info.scores)
    info.disagreement = is_disagreement(info.scores, threshold)
    passed = None
    if threshold is not None:
        info.pass_votes = sum(1 for s in info.scores if s >= threshold)
        passed = majority_pass(info.pass_votes, len(info.scores), final, threshold)
    # Prefer a judgement that gave exactly the final score; with an even split (2 and 3 → 3) the closest one.
    # (scored verdicts all have a score; min keeps the first of equals)
    representative = min(scored, key=lambda v: abs(v.score - final) if v.score is not None else float("inf"))
    feedback = representative.feedback
    if representative.score != final:
        feedback = f"[median of {len(scored)} judgements = {final}; this feedback is from a {representative.score:g}]" \
                   f"\n{feedback}"
    return representative.model_copy(update={
        "score": float(final), "passed": passed, "feedback": feedback, "usage": usage,
        "details": {**representative.details, details_key: info.model_dump(), **extra}})
