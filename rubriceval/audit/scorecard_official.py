"""Official scorecard totals (issues 27, 40): ONE rule, `official_verdict`, read by every surface — report, trend,
gate, compare, exports, the team app's pages (agent, reviewer, lead) and the API. The stored verdict is never
rewritten; the official one is derived at read time from the append-only human decisions:

- item decisions, applied oldest first to the machine's outcomes: a reviewer's (audit/scorecard_reviews.py: confirm
  keeps a hit, reject clears it, missed adds it, na makes the item not applicable; a lead's adjudication of a card
  review task is a review too; on an item awaiting review — undecided, or pending review — the decision decides it,
  so the official total counts once nothing waits), and each accepted appeal against one item (audit/appeals.py: the appealed item
  turns over — a hit becomes clear, an N/A or clear item with a bonus becomes a hit);
- then the card's own arithmetic (scorecard/arithmetic.py: caps, dimension limits, clamp, fatal) gives the total;
- a decision on the whole verdict (an appeal or override naming no item, with the total a person gave) sets the total,
  unless an item decision came after it.

Registered with the official-score module on import: which items of a scorecard verdict an agent may appeal and the
total once one turns over.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from rubriceval.audit.official import (
    HumanDecision,
    OfficialScores,
    decision_events,
    register_deductions,
    register_recompute,
)
from rubriceval.audit.scorecard_reviews import Review, ReviewStore
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict, Status
from rubriceval.store.scorecards import ScorecardStore

KIND = "scorecard"
Key = tuple[str, str]                      # (sample id, scorecard)
REVIEW_STATUS: dict[str, Status | None] = {"confirm": "hit", "reject": "clear", "missed": "hit",
                                           "na": "not_applicable", "clear": "clear"}


class ItemDecision(NamedTuple):
    """One person's decision on one item of one verdict. status None: the item turns over (an accepted appeal)."""

    at: float
    item: str
    status: Status | None
    source: str                            # review, adjudication, appeal
    by: str


def turned_over(card: Scorecard, outcome: CardItemOutcome) -> Status:
    """What an accepted appeal makes of an item: a hit (a deduction, a fatal, a bonus) is cleared; anything else
    (an N/A or clear bonus the agent says they earned) becomes a hit."""
    return "clear" if outcome.status == "hit" else "hit"


def appealable_items(card: Scorecard, verdict: ScorecardVerdict) -> list[str]:
    """The items an agent may appeal: every hit that changes the total (a deduction, a fatal), and every bonus the
    verdict did not give (N/A or clear). An item awaiting review is no decision yet: a reviewer decides it first."""
    items = {i.id: i for i in card.items}
    out = []
    for o in verdict.outcomes:
        item = items.get(o.item)
        if item is None or o.awaiting_review:
            continue
        if o.status == "hit" and ((item.points or 0) != 0 or item.fatal):
            out.append(o.item)
        elif o.status in ("clear", "not_applicable") and (item.points or 0) > 0:
            out.append(o.item)
    return out


def _applied(card: Scorecard, outcomes: list[CardItemOutcome], d: ItemDecision) -> list[CardItemOutcome]:
    out = []
    for o in outcomes:
        if o.item == d.item:
            status = d.status or turned_over(card, o)
            # a person's decision is a decision: an undecided or pending item stops waiting (issues 39, 44)
            o = o.model_copy(update={"status": status, "occurrences": max(1, o.occurrences) if status == "hit" else 0,
                                     "reason": f"{d.source}: {d.by}", "pending_review": False})
        out.append(o)
    return out


def official_verdict(card: Scorecard, verdict: ScorecardVerdict, items: Sequence[ItemDecision] = (),
                     whole: HumanDecision | None = None) -> ScorecardVerdict:
    """THE official verdict of one conversation: the item decisions applied oldest first, the card's arithmetic over
    the result, then a later decision on the whole total. Every surface reads its total from here."""
    if not items and whole is None:
        return verdict
    outcomes = list(verdict.outcomes)
    for d in sorted(items, key=lambda d: d.at):
        outcomes = _applied(card, outcomes, d)
    decided = verdict.model_copy(update={"outcomes": outcomes, "totals": scorecard_total(card, outcomes)})
    if whole is None or (items and max(d.at for d in items) > whole.at):
        return decided
    totals = decided.totals.model_copy(update={"total": int(whole.score), "unscored_reason": None})
    return decided.model_copy(update={"totals": totals})


def review_decisions(reviews: Iterable[Review], version: str) -> list[ItemDecision]:
    return [ItemDecision(r.created_at, r.item, REVIEW_STATUS[r.decision],
                         "adjudication" if r.note.startswith(ADJUDICATION_NOTE) else "review", r.reviewer)
            for r in reviews if r.version == version and r.decision in REVIEW_STATUS]


ADJUDICATION_NOTE = "[adjudication] "      # a lead's adjudication of a card review task, recorded as their review


class CardDecisions:
    """Every human decision on one run's scorecard verdicts, read once; `official(card, verdict)` applies them."""

    def __init__(self, reviews: Mapping[Key, list[Review]], appeals: Mapping[Key, list[HumanDecision]],
                 whole: Mapping[Key, HumanDecision]):
        self.reviews, self.appeals, self.whole = reviews, appeals, whole

    @classmethod
    def load(cls, runs: Any, run_id: str, card_id: str | None = None) -> CardDecisions:
        reviews: dict[Key, list[Review]] = {}
        for review in ReviewStore(runs).reviews(run_id, card_id):
            reviews.setdefault((review.sample_id, review.scorecard), []).append(review)
        appeals: dict[Key, list[HumanDecision]] = {}
        whole: dict[Key, HumanDecision] = {}
        for d in decision_events(runs.conn, run_id):
            if card_id is not None and d.scorer != card_id:
                continue
            if d.source == "appeal" and d.item:
                appeals.setdefault((d.sample_id, d.scorer), []).append(d)
            else:
                whole[(d.sample_id, d.scorer)] = d
        return cls(reviews, appeals, whole)

    def keys(self) -> set[Key]:
        return set(self.reviews) | set(self.appeals) | set(self.whole)

    def __bool__(self) -> bool:
        return bool(self.reviews or self.appeals or self.whole)

    def item_decisions(self, verdict: ScorecardVerdict) -> list[ItemDecision]:
        key = (verdict.sample_id, verdict.scorecard)
        return [*review_decisions(self.reviews.get(key, []), verdict.version),
                *(ItemDecision(d.at, d.item, None, "appeal", d.by) for d in self.appeals.get(key, []))]

    def official(self, card: Scorecard, verdict: ScorecardVerdict) -> tuple[ScorecardVerdict, bool]:
        """The official verdict, and whether a person changed it."""
        items = self.item_decisions(verdict)
        whole = self.whole.get((verdict.sample_id, verdict.scorecard))
        return official_verdict(card, verdict, items, whole), bool(items or whole)

    def latest(self, key: Key) -> tuple[str, str, float] | None:
        """(source, who, when) of the latest decision on a verdict, for the reports' badges."""
        found = [(r.created_at, "review", r.reviewer) for r in self.reviews.get(key, [])]
        found += [(d.at, d.source, d.by) for d in self.appeals.get(key, [])]
        if key in self.whole:
            found.append((self.whole[key].at, self.whole[key].source, self.whole[key].by))
        if not found:
            return None
        at, source, by = max(found)
        return source, by, at


# -- the official-score module's hooks: appealable items, the total once one turns over -----------------------------
def scorecard_deductions(details: Mapping[str, Any]) -> list[str]:
    return [p["item"] for p in (details.get("totals") or {}).get("items") or [] if (p.get("points") or 0) < 0]


def without(card: Scorecard, verdict: ScorecardVerdict, removed: Sequence[str]) -> ScorecardVerdict:
    """The verdict with the removed items counted as clear, its totals recomputed."""
    outcomes = [o.model_copy(update={"status": "clear", "occurrences": 0}) if o.item in removed else o
                for o in verdict.outcomes]
    return verdict.model_copy(update={"outcomes": outcomes, "totals": scorecard_total(card, outcomes)})


def with_item_turned(card: Scorecard, verdict: ScorecardVerdict, item: str) -> ScorecardVerdict:
    """The verdict as it would be if an appeal on `item` were accepted (the card's arithmetic)."""
    return official_verdict(card, verdict, [ItemDecision(float("inf"), item, None, "appeal", "")])


def _recompute(definition: Mapping[str, Any], details: Mapping[str, Any], removed: Sequence[str]) -> float | None:
    card, verdict = Scorecard.model_validate(definition), ScorecardVerdict.model_validate(details)
    for item in removed:
        verdict = with_item_turned(card, verdict, item)
    total = verdict.totals.total
    return None if total is None else float(total)


register_recompute(KIND, _recompute)
register_deductions(KIND, scorecard_deductions)


# -- readers -------------------------------------------------------------------------------------------------------
def official_pairs(runs: Any, run: str, card_id: str | None = None, *, machine_only: bool = False
                   ) -> list[tuple[ScorecardVerdict, bool]]:
    """(official verdict, whether a person changed it) per stored verdict, in dataset order."""
    store = ScorecardStore(runs)
    verdicts = store.verdicts(run, card_id)
    if machine_only or not verdicts:
        return [(v, False) for v in verdicts]
    decisions = CardDecisions.load(runs, runs.resolve(run), card_id)
    if not decisions:
        return [(v, False) for v in verdicts]
    cards = {c.id: c for c in store.cards(run)}
    return [decisions.official(cards[v.scorecard], v) if v.scorecard in cards else (v, False) for v in verdicts]


def official_totals(runs: Any, run: str, card_id: str | None = None) -> dict[Key, int | None]:
    """(sample id, scorecard) → the official total: what every page shows."""
    return {(v.sample_id, v.scorecard): v.totals.total for v, _ in official_pairs(runs, run, card_id)}


def decided_verdicts(runs: Any, run_id: str, official: OfficialScores | None = None
                     ) -> dict[Key, ScorecardVerdict]:
    """(sample id, scorecard) → the official verdict, for only the verdicts a person changed: what readers that
    stream the stored totals (segments, trend) put in their place — every other verdict is read as stored.
    (`official` is accepted for the callers that read it already; the card's decisions are read here.)"""
    decisions = CardDecisions.load(runs, run_id)
    with runs.lock:
        ids = {r[0] for r in runs.conn.execute("SELECT scorecard FROM scorecard_defs WHERE run_id = ?", (run_id,))}
    keys = sorted(k for k in decisions.keys() if k[1] in ids)
    out: dict[Key, ScorecardVerdict] = {}
    if not keys:                      # nothing a person changed: the definitions are not even read
        return out
    cards = {c.id: c for c in ScorecardStore(runs).cards(run_id)}
    for start in range(0, len(keys), 500):
        part = set(keys[start:start + 500])
        samples = sorted({sample_id for sample_id, _ in part})
        with runs.lock:
            rows = runs.conn.execute(
                "SELECT verdict_json FROM scorecard_verdicts WHERE run_id = ? AND sample_id IN "
                f"({','.join('?' * len(samples))})", (run_id, *samples)).fetchall()
        for row in rows:
            v = ScorecardVerdict.model_validate_json(row[0])
            if (v.sample_id, v.scorecard) in part and v.scorecard in cards:
                verdict, changed = decisions.official(cards[v.scorecard], v)
                if changed:
                    out[(v.sample_id, v.scorecard)] = verdict
    return out
