"""The store side of selective scoring (issue 44): the reviewed decisions an acceptance region is fitted on, and what
a run's acceptance came to.

Reviewed decisions of a card's item, for one judge: every run of the store that scored the card with that judge model
(and started before `before`: a run's fit uses only the reviews made before it started, so the report of a run
recomputes exactly the fit the run applied), every conversation where a person decided the item before `before` —
a scorecard review (audit/scorecard_reviews.py: confirm, reject, missed, clear, na, adjudications included) or a
blind card review task (audit/team_cards.py: the reviewer decides every item, so an agreed clear item counts too,
which leaves no scorecard review). The latest decision counts. Only decisions the machine made (hit or clear) are
paired. An item counts across card versions while its predicate (question, check, rubric, hit_on) is the same: a
refitted cut-off or new examples make a new version, and the reviews made on the old one still describe the
judge's answers to the same question; the confidence is read against the cut-off of the version that decided."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.audit.scorecard_official import REVIEW_STATUS
from rubriceval.audit.scorecard_reviews import ReviewStore
from rubriceval.audit.team_cards import statuses_of
from rubriceval.i18n import Lang, say
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.trust.fit_reviews import judge_of_run
from rubriceval.trust.selective import (
    AcceptanceRegion,
    ReviewedDecision,
    apply_acceptance,
    decision_confidence,
    fit_regions,
    has_targets,
    item_target,
)


def run_judge(runs: Any, run_id: str) -> str:
    """The judge a run used, named as calibrations name it (trust/fit_reviews.py judge_of_run: the embedded judge by
    its model file, any other by its model)."""
    return judge_of_run(runs.run_info(run_id).config.judge)


def predicate_key(item: ScorecardItem) -> str:
    """What makes two versions of an item the same decision: its predicate and when it hits."""
    return json.dumps({"question": item.question, "check": item.check, "hit_on": item.hit_on,
                       "rubric": item.rubric.model_dump() if item.rubric else None}, sort_keys=True,
                      ensure_ascii=False, default=str)


def _human_statuses(runs: Any, run_id: str, card_id: str, before: float | None) -> dict[tuple[str, str], str]:
    """(sample, item) → the latest status a person gave it in this run before `before`."""
    events: list[tuple[float, str, str, str]] = []
    for review in ReviewStore(runs).reviews(run_id, card_id):
        decided = REVIEW_STATUS.get(review.decision)
        if decided is not None and (before is None or review.created_at < before):
            events.append((review.created_at, review.sample_id, review.item, decided))
    if runs.conn.table_exists("team_reviews"):
        with runs.lock:
            rows = runs.conn.execute("SELECT saved_at, sample_id, tags FROM team_reviews WHERE run_id = ? AND "
                                     "scorer = ? AND kind = 'score'", (run_id, card_id)).fetchall()
        for saved_at, sample_id, tags in rows:
            if before is None or saved_at < before:
                events += [(saved_at, sample_id, item, status) for item, status in statuses_of(tags).items()]
    latest: dict[tuple[str, str], str] = {}
    for _, sample_id, item, said in sorted(events, key=lambda e: e[0]):
        latest[(sample_id, item)] = said
    return latest


def _runs_of(runs: Any, card_id: str, judge: str, before: float | None) -> Iterator[tuple[str, Scorecard]]:
    for info in runs.list_runs():
        if before is not None and info.created_at >= before:
            continue
        if judge_of_run(info.config.judge) != judge:
            continue
        card = next((c for c in ScorecardStore(runs).cards(info.run_id) if c.id == card_id), None)
        if card is not None:
            yield info.run_id, card


def reviewed_decisions(runs: Any, card: Scorecard, judge: str, *, before: float | None = None
                       ) -> dict[str, list[ReviewedDecision]]:
    """item id → its reviewed machine decisions on this judge (module doc), for the items of `card`."""
    wanted = {i.id: predicate_key(i) for i in card.items}
    found: dict[str, list[ReviewedDecision]] = {i.id: [] for i in card.items}
    for run_id, scored_with in _runs_of(runs, card.id, judge, before):
        human = _human_statuses(runs, run_id, card.id, before)
        if not human:
            continue
        items = {i.id: i for i in scored_with.items if wanted.get(i.id) == predicate_key(i)}
        samples = {sample for sample, _ in human}
        for verdict in ScorecardStore(runs).verdicts(run_id, card.id):
            if verdict.sample_id not in samples:
                continue
            for outcome in verdict.outcomes:
                status, item = human.get((verdict.sample_id, outcome.item)), items.get(outcome.item)
                if status is None or item is None or outcome.status not in ("hit", "clear"):
                    continue
                found[item.id].append(ReviewedDecision(
                    item=item.id, machine_hit=outcome.status == "hit", reviewer_hit=status == "hit",
                    confidence=decision_confidence(item, outcome, judge), run_id=run_id,
                    sample_id=verdict.sample_id))
    return found


def regions_for_run(runs: Any, run_id: str, card: Scorecard) -> dict[str, AcceptanceRegion]:
    """The regions a run applies to a card: fitted on the reviews made before the run started, for its judge."""
    if not has_targets(card):
        return {}
    judge = run_judge(runs, run_id)
    before = runs.run_info(run_id).created_at
    return fit_regions(card, reviewed_decisions(runs, card, judge, before=before), judge)


class ItemAcceptance(BaseModel):
    """One item's acceptance in one run: its region (fitted before the run) and what the run's decisions came to."""

    item: str
    name: str
    region: AcceptanceRegion
    decisions: int = 0                 # hit, clear or undecided: what needed a decision
    accepted: int = 0                  # machine decisions accepted automatically
    pending: int = 0                   # machine decisions pending review
    undecided: int = 0                 # the judge could not tell (never accepted)
    waiting: int = 0                   # pending or undecided with no person's decision yet

    @property
    def coverage(self) -> float | None:
        return self.accepted / self.decisions if self.decisions else None


class CardAcceptance(BaseModel):
    """A card's acceptance in one run, per item with a target and overall. A rubric with a target is shown the same
    way (kind 'rubric', `scorecard` its id, one row: the rubric; trust/rubric_selective.py)."""

    run_id: str
    scorecard: str
    name: str
    judge: str
    kind: Literal["scorecard", "rubric"] = "scorecard"
    items: list[ItemAcceptance] = Field(default_factory=list)

    @property
    def decisions(self) -> int:
        return sum(i.decisions for i in self.items)

    @property
    def accepted(self) -> int:
        return sum(i.accepted for i in self.items)

    @property
    def pending(self) -> int:
        return sum(i.pending for i in self.items)

    @property
    def undecided(self) -> int:
        return sum(i.undecided for i in self.items)

    @property
    def waiting(self) -> int:
        return sum(i.waiting for i in self.items)

    @property
    def n_reviewed(self) -> int:
        return sum(i.region.n_reviewed for i in self.items)

    @property
    def coverage(self) -> float | None:
        return self.accepted / self.decisions if self.decisions else None

    @property
    def guaranteed(self) -> float | None:
        """The lowest agreement guaranteed among the items that accept something by evidence (None: none does)."""
        bounds = [i.region.lower_bound for i in self.items if i.accepted and i.region.lower_bound is not None]
        return min(bounds) if bounds else None


def run_acceptance(runs: Any, run: str) -> list[CardAcceptance]:
    """Every card of the run with a target: its regions as the run applied them, and its decisions counted (the
    stored verdicts' pending marks; `waiting`: still without a person's decision in the official verdicts)."""
    from rubriceval.audit.scorecard_official import official_pairs

    run_id = runs.resolve(run)
    out = []
    for card in ScorecardStore(runs).cards(run_id):
        if not has_targets(card):
            continue
        regions = regions_for_run(runs, run_id, card)
        names = {i.id: i.label for i in card.items}
        rows = {item: ItemAcceptance(item=item, name=names[item], region=region) for item, region in regions.items()}
        for verdict, _ in official_pairs(runs, run_id, card.id, machine_only=True):
            _count(verdict, rows)
        for verdict, _ in official_pairs(runs, run_id, card.id):
            for o in verdict.outcomes:
                if o.item in rows and o.awaiting_review:
                    rows[o.item].waiting += 1
        out.append(CardAcceptance(run_id=run_id, scorecard=card.id, name=card.name, judge=run_judge(runs, run_id),
                                  items=[rows[i.id] for i in card.items if i.id in rows and item_target(card, i)]))
    return out


def _count(verdict: Any, rows: dict[str, ItemAcceptance]) -> None:
    for o in verdict.outcomes:
        row = rows.get(o.item)
        if row is None or o.status not in ("hit", "clear", "undecided"):
            continue
        row.decisions += 1
        if o.status == "undecided":
            row.undecided += 1
        elif o.pending_review:
            row.pending += 1
        else:
            row.accepted += 1


class RunAcceptance:
    """What a run applies to each verdict it scores (run/scorecard_stage.py, batch/scorecards.py): the cards' regions
    fitted once, before the first verdict, on the reviews made before the run started."""

    def __init__(self, runs: Any, run_id: str, cards: Any):
        self.cards = {card.id: card for card in cards}
        targeted = [card for card in cards if has_targets(card)]
        # a run without a target reads nothing (naming the embedded judge reads its model file)
        self.judge = run_judge(runs, run_id) if targeted else ""
        self.regions = {card.id: regions_for_run(runs, run_id, card) for card in targeted}

    def notes(self, lang: Lang = "en") -> list[str]:
        """A line per card with a target: what this run accepts automatically, and per item that accepts nothing by
        evidence, why (the run's output says it before anything is judged)."""
        lines = []
        for card_id, regions in self.regions.items():
            accepting = [r.item for r in regions.values() if r.accepts != "none"]
            lines.append(f"scorecard {card_id}: auto_accept on judge {self.judge or '—'}: "
                         f"{len(accepting)} of {len(regions)} item(s) accept decisions automatically")
            lines += [f"  {r.item}: {say(r.reason, lang)}" for r in regions.values()
                      if r.reason is not None and r.accepts == "none"]
        return lines

    def __call__(self, verdict: Any) -> Any:
        """The verdict with the decisions outside their region pending review (unchanged without a target)."""
        regions = self.regions.get(verdict.scorecard)
        if not regions:
            return verdict
        return apply_acceptance(self.cards[verdict.scorecard], verdict, regions, self.judge)
