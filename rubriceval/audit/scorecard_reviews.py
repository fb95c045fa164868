"""Reviewers' decisions on a scorecard's item outcomes, and the trust per item they give.

A reviewer confirms a deduction (a true hit), rejects it (a false hit), adds one the tool missed (`missed`: the
item should have hit where it said clear or N/A), or marks the item not applicable (`na`). Decisions are appended,
never changed; the latest decision on a (conversation, item) counts. Per item: precision = confirmed / (confirmed +
rejected), recall = confirmed / (confirmed + missed), each with a Wilson 95% interval; an item whose bar (`trust:` on
the item, or the card's for judge-decided items) is not met — too few reviews, or precision/recall below it — is flagged in every report.

A recomputed total after reviews is `scorecard_total(card, reviewed_outcomes(verdict, decisions))`.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Lang, Message, msg, say
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict

# clear: a lead re-affirms an item the machine did not hit (over a reviewer's missed or N/A; team_cards.py)
Decision = Literal["confirm", "reject", "missed", "na", "clear"]
DECISIONS: tuple[Decision, ...] = ("confirm", "reject", "missed", "na", "clear")


class Review(BaseModel):
    sample_id: str
    scorecard: str
    item: str
    version: str
    decision: Decision
    reviewer: str = ""
    note: str = ""
    created_at: float = 0.0


class ItemTrustStats(BaseModel):
    item: str
    confirmed: int = 0
    rejected: int = 0
    missed: int = 0
    precision: float | None = None
    precision_ci: tuple[float | None, float | None] = (None, None)
    recall: float | None = None
    recall_ci: tuple[float | None, float | None] = (None, None)
    bar: dict[str, Any] | None = None
    untrusted: str | None = None          # why the item is below its bar (None: trusted, or no bar)
    untrusted_message: Message | None = None      # the same, for a report in either language

    def untrusted_said(self, lang: Lang) -> str:
        return say(self.untrusted_message, lang) if self.untrusted_message is not None else (self.untrusted or "")

    @property
    def n_reviewed(self) -> int:
        return self.confirmed + self.rejected + self.missed


class ReviewStore:
    def __init__(self, runs: Any):
        self.runs, self.conn, self._lock = runs, runs.conn, runs._lock

    def add(self, run: str, verdict: ScorecardVerdict, item: str, decision: Decision, reviewer: str = "",
            note: str = "") -> Review:
        """Record one decision; refused when it does not fit the outcome (confirm/reject a hit, add a missed one
        where the tool did not hit)."""
        run_id = self.runs.resolve(run)
        check_decision(verdict, item, decision)
        review = Review(sample_id=verdict.sample_id, scorecard=verdict.scorecard, item=item, version=verdict.version,
                        decision=decision, reviewer=reviewer, note=note, created_at=time.time())
        with self._lock, self.conn:
            self.conn.execute("INSERT INTO scorecard_reviews VALUES (?,?,?,?,?,?,?,?,?)",
                              (run_id, review.sample_id, review.scorecard, review.item, review.version,
                               review.decision, review.reviewer, review.note, review.created_at))
        return review

    def reviews(self, run: str, scorecard: str | None = None) -> list[Review]:
        run_id = self.runs.resolve(run)
        where, params = ("AND scorecard = ?", (scorecard,)) if scorecard else ("", ())
        with self._lock:
            rows = self.conn.execute(f"SELECT * FROM scorecard_reviews WHERE run_id = ? {where} ORDER BY created_at",
                                     (run_id, *params)).fetchall()
        return [Review(**{k: r[k] for k in Review.model_fields}) for r in rows]


def check_decision(verdict: ScorecardVerdict, item: str, decision: str) -> None:
    """A decision must fit the outcome: confirm/reject a hit, add a missed one where the tool did not hit."""
    if decision not in DECISIONS:
        raise RubricEvalError(f"decision {decision!r}: use confirm, reject, missed, clear or na", field="decision")
    outcome = next((o for o in verdict.outcomes if o.item == item), None)
    if outcome is None:
        raise RubricEvalError(f"scorecard '{verdict.scorecard}' has no item '{item}'", field="item")
    if decision in ("confirm", "reject") and outcome.status == "undecided":
        raise RubricEvalError(f"item '{item}' is undecided on '{verdict.sample_id}' (the judge could not tell): "
                              "decide it", field="decision", hint="missed (it hits), clear, or na")
    if decision in ("confirm", "reject") and outcome.status != "hit":
        raise RubricEvalError(f"item '{item}' is {outcome.status} on '{verdict.sample_id}': only a hit can be "
                              f"confirmed or rejected", field="decision", hint="add a missed deduction with missed")
    if decision == "missed" and outcome.status == "hit":
        raise RubricEvalError(f"item '{item}' already hit on '{verdict.sample_id}'", field="decision",
                              hint="confirm or reject it")
    if decision == "clear" and outcome.status == "hit":
        raise RubricEvalError(f"item '{item}' hit on '{verdict.sample_id}'", field="decision", hint="reject it")
    if decision == "na" and outcome.status == "not_applicable":
        raise RubricEvalError(f"item '{item}' is already N/A on '{verdict.sample_id}'", field="decision")


def latest(reviews: Iterable[Review]) -> dict[tuple[str, str], Review]:
    """The decision that counts on each (conversation, item): the latest."""
    found: dict[tuple[str, str], Review] = {}
    for review in sorted(reviews, key=lambda r: r.created_at):
        found[(review.sample_id, review.item)] = review
    return found


def reviewed_outcomes(verdict: ScorecardVerdict, reviews: Iterable[Review]) -> list[CardItemOutcome]:
    """The verdict's outcomes as reviewers decided them: a rejected hit is clear, a missed one a hit."""
    decided = {item: r for (sample, item), r in latest(reviews).items() if sample == verdict.sample_id}
    out = []
    for o in verdict.outcomes:
        r = decided.get(o.item)
        if r is not None and r.decision == "reject":
            o = o.model_copy(update={"status": "clear", "occurrences": 0, "reason": f"rejected by {r.reviewer}"})
        elif r is not None and r.decision == "missed":
            o = o.model_copy(update={"status": "hit", "occurrences": 1, "reason": f"added by {r.reviewer}"})
        elif r is not None and r.decision == "clear":
            o = o.model_copy(update={"status": "clear", "occurrences": 0, "reason": f"clear by {r.reviewer}"})
        elif r is not None and r.decision == "na":
            o = o.model_copy(update={"status": "not_applicable", "occurrences": 0, "reason": f"N/A by {r.reviewer}"})
        if r is not None:              # a person decided it: an undecided or pending item no longer waits
            o = o.model_copy(update={"pending_review": False})
        out.append(o)
    return out


def item_trust(card: Scorecard, reviews: Sequence[Review]) -> dict[str, ItemTrustStats]:
    from rubriceval.stats.unpaired import wilson_interval

    mine = [r for r in latest(r for r in reviews if r.scorecard == card.id and r.version == card.version_tag).values()]
    stats: dict[str, ItemTrustStats] = {}
    for item in card.items:
        s = ItemTrustStats(item=item.id)
        for r in mine:
            if r.item == item.id:
                s.confirmed += r.decision == "confirm"
                s.rejected += r.decision == "reject"
                s.missed += r.decision == "missed"
        if s.confirmed + s.rejected:
            s.precision = s.confirmed / (s.confirmed + s.rejected)
            s.precision_ci = wilson_interval(s.confirmed, s.confirmed + s.rejected)
        if s.confirmed + s.missed:
            s.recall = s.confirmed / (s.confirmed + s.missed)
            s.recall_ci = wilson_interval(s.confirmed, s.confirmed + s.missed)
        bar = card.trust_bar(item)
        if bar is not None:
            s.bar = bar.model_dump()
            if s.n_reviewed < bar.min_reviews:
                s.untrusted = f"{s.n_reviewed} review(s), the bar needs {bar.min_reviews}"
                s.untrusted_message = msg("sc_untrusted_reviews", n=s.n_reviewed, bar=bar.min_reviews)
            elif s.precision is None or s.precision < bar.min_precision:
                s.untrusted = f"precision {_pct(s.precision)} < {bar.min_precision:.0%}"
                s.untrusted_message = msg("sc_untrusted_precision", value=_pct(s.precision),
                                          bar=f"{bar.min_precision:.0%}")
            elif bar.min_recall is not None and (s.recall is None or s.recall < bar.min_recall):
                s.untrusted = f"recall {_pct(s.recall)} < {bar.min_recall:.0%}"
                s.untrusted_message = msg("sc_untrusted_recall", value=_pct(s.recall), bar=f"{bar.min_recall:.0%}")
        stats[item.id] = s
    return stats


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"
