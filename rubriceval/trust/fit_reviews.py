"""Reviews feed the next run (issue 44.1): a scorecard question item's cut-off on p(yes), fitted for the judge of the
reviewed runs from what reviewers decided, by the one fit of `calibrate --fit-thresholds` (trust/fit_cutoff.py).

What a reviewer decided on an item of a conversation is its status once the human decisions are applied: a review
(`scorecard review`: confirm → hit, reject → clear, missed → hit, na → N/A, clear → clear) or a card review task
saved by a reviewer or adjudicated by the lead (every item decided: an item nobody changed keeps its status),
the latest decision counting. The question's right answer follows from it: an item hit on `yes` (`hit_on: yes`) was
rightly answered yes where it is hit, an item hit on `no` where it is clear. An item the reviewer marked N/A has no
right answer; one reviewed without a p(yes) (N/A by a rule, unscored) is counted as unasked, never guessed.

Per item: the reviewed answers are split (stratified, seeded) into a fitting half and a held-out half; the cut-off
that maximises balanced accuracy on the fitting half is PROPOSED only when it beats the item's current cut-off for this
judge (its calibration's, else 0.5) on the held-out half; otherwise REFUSED with the figures that say why. A proposed
cut-off is an `ItemCalibration` (rubric/calibration.py, `method: reviews`) naming the judge it was fitted for — with
any other judge the item ignores it — and it keeps the current calibration's undecided band. Writing it into the card
file as a new version is the studio's (studio/calibration_proposal.py): the file is never changed here.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel

from rubriceval.audit.scorecard_official import REVIEW_STATUS
from rubriceval.audit.scorecard_reviews import Review
from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric.calibration import ItemCalibration
from rubriceval.rubric.predicate import DEFAULT_CUTOFF
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.scorecard.verdict import ScorecardVerdict, Status
from rubriceval.trust.fit_cutoff import CutoffFit, fit_cutoff

Key = tuple[str, str]                  # (sample id, item id)


class ReviewedAnswer(BaseModel):
    """One reviewed decision of a question item: the judge's p(yes) and the answer the reviewer's decision implies."""

    sample_id: str
    p_yes: float
    answer: bool
    per_turn: bool = False            # the p(yes) is the highest over the turns asked (a decomposed question)
    # what p_yes is (CardItemOutcome.score_kind): a turn checker's probability is another scale than a judge's p(yes)
    scale: Literal["p_yes", "turn_max", "checker"] = "p_yes"
    turn: int | None = None           # the decisive turn (the highest p(yes)), when asked turn by turn


class ItemFit(BaseModel):
    item: str
    question: str
    judge: str
    current: float                      # the cut-off the item has for this judge now
    current_source: str                 # where that comes from ("default", "reviews calibration" …)
    n_answers: int                      # reviewed decisions with a p(yes) and a right answer
    n_unasked: int                      # reviewed decisions without a p(yes) (N/A by a rule, unscored)
    fit: CutoffFit | None = None
    calibration: ItemCalibration | None = None      # set when the fit is proposed
    reason: str

    @property
    def accepted(self) -> bool:
        return self.calibration is not None

    def line(self) -> str:
        unasked = f"; {self.n_unasked} reviewed without a p(yes)" if self.n_unasked else ""
        if self.fit is None:
            return f"REFUSED {self.item}: {self.reason}{unasked}"
        return f"{self.item}: {self.fit.line('reviews')}{unasked}"


class CardFit(BaseModel):
    card: str
    judge: str
    runs: list[str]
    items: list[ItemFit]

    @property
    def proposed(self) -> list[ItemFit]:
        return [f for f in self.items if f.accepted]

    def calibrations(self) -> dict[str, ItemCalibration]:
        return {f.item: f.calibration for f in self.items if f.calibration is not None}


def judge_of_run(judge: Any) -> str:
    """The name a calibration is fitted for, from a run's stored judge config, as the scoring side names the judge
    that reads it (scoring/judgement/decide.judge_name): the embedded judge by its verified model file (its config
    says only `local`, with no server address), any other judge by its model."""
    if not isinstance(judge, Mapping):
        return ""
    model = str(judge.get("model") or "")
    if judge.get("base_url") is None and model in ("", "local"):
        from rubriceval.judge.embedded_model import embedded_judge_identity

        return embedded_judge_identity()
    return model


def question_items(card: Scorecard) -> list[ScorecardItem]:
    """The items a reviewed cut-off can serve: those decided by a yes/no question to the judge."""
    return [item for item in card.items if item.question]


def current_rule(item: ScorecardItem, judge: str, made: ItemCalibration | None = None
                 ) -> tuple[float, tuple[float, float] | None, str, ItemCalibration | None]:
    """(cut-off, undecided band, where they come from, the calibration) the item uses with this judge now: the one it
    carries for the judge, else `made` (the one its examples make on the judge at run time: fit_examples.
    examples_rules), else 0.5."""
    found = item.calibration_for(judge) or made
    if found is None:
        return DEFAULT_CUTOFF, None, "default", None
    return found.cutoff, found.undecided, f"{found.method} calibration", found


def reviewed_answers(card: Scorecard, verdicts: Iterable[ScorecardVerdict], decided: Mapping[Key, Status]
                     ) -> tuple[dict[str, list[ReviewedAnswer]], dict[str, int]]:
    """Per question item: the reviewed answers (p(yes), right answer), and how many reviewed decisions had no
    p(yes). `decided`: the reviewers' status per (sample, item)."""
    items = {item.id: item for item in question_items(card)}
    answers: dict[str, list[ReviewedAnswer]] = {i: [] for i in items}
    unasked = dict.fromkeys(items, 0)
    for verdict in verdicts:
        for outcome in verdict.outcomes:
            item = items.get(outcome.item)
            status = decided.get((verdict.sample_id, outcome.item))
            if item is None or status not in ("hit", "clear"):
                continue
            if outcome.p_yes is None or outcome.status == "not_applicable":
                unasked[item.id] += 1
                continue
            turn = next((e.turn for e in outcome.evidence if e.turn is not None), None)   # the decisive turn
            scale = outcome.score_kind or ("turn_max" if turn is not None else "p_yes")
            answers[item.id].append(ReviewedAnswer(sample_id=verdict.sample_id, p_yes=outcome.p_yes,
                                                   answer=(status == "hit") == item.hit_answer,
                                                   per_turn=turn is not None, turn=turn, scale=scale))
    return answers, unasked


def fit_item(item: ScorecardItem, judge: str, answers: Sequence[ReviewedAnswer], n_unasked: int = 0, *,
             holdout_fraction: float = 0.5, seed: int = 0, fitted_at: str | None = None,
             now: ScorecardItem | None = None, made: ItemCalibration | None = None) -> ItemFit:
    """One item's reviewed cut-off for `judge`, proposed only when it beats the one the item has now (`now`: the item
    in the card's current version, which the proposal would replace; default `item`; `made`: the rule its examples
    make on this judge) on held-out reviews."""
    current, band, source, calibration = current_rule(now or item, judge, made)
    base = ItemFit(item=item.id, question=item.question or "", judge=judge, current=current, current_source=source,
                   n_answers=len(answers), n_unasked=n_unasked, reason="no reviewed decision with a p(yes) of this judge")
    # one scale per fit: the one most reviewed decisions were read on (a checker's probability and a judge's p(yes)
    # are different numbers for the same conversation)
    scales = [a.scale for a in answers]
    scale = max(dict.fromkeys(scales), key=scales.count) if answers else "p_yes"
    answers = [a for a in answers if a.scale == scale]
    if not answers:
        return base
    fit = fit_cutoff(item.question or item.id, [a.p_yes for a in answers], [a.answer for a in answers],
                     holdout_fraction=holdout_fraction, seed=seed, current=current, band=band, unit="reviews")
    if not fit.accepted:
        return base.model_copy(update={"fit": fit, "reason": fit.reason})
    note = (f"reviews: held-out balanced accuracy {fit.balanced_accuracy_heldout:.2f} vs "
            f"{fit.balanced_accuracy_default_heldout:.2f} at {current:g} ({source}); {fit.n_train} reviews to fit, "
            f"{fit.n_heldout} held out")
    fitted = ItemCalibration(judge=judge, cutoff=fit.cutoff, undecided=band, method="reviews",
                             n=fit.n_train + fit.n_heldout, score=scale,
                             fitted_at=fitted_at or datetime.now(timezone.utc).isoformat(timespec="seconds"),
                             auc=None if fit.auc_heldout is None else round(fit.auc_heldout, 4), note=note)
    return base.model_copy(update={"fit": fit, "calibration": fitted, "reason": fit.reason})


def fit_card(card: Scorecard, judge: str, verdicts: Sequence[ScorecardVerdict], decided: Mapping[Key, Status], *,
             runs: Sequence[str] = (), items: Sequence[str] | None = None, holdout_fraction: float = 0.5,
             seed: int = 0, fitted_at: str | None = None, current: Scorecard | None = None,
             made: Mapping[str, ItemCalibration] | None = None) -> CardFit:
    """Every question item's (or only `items`') reviewed fit for `judge` from the verdicts (scored with `card`) and
    reviewers' statuses; `current`: the card's version in use now, whose cut-offs a fit must beat (default `card`);
    `made`: the rules its items' examples make on this judge (fit_examples.examples_rules)."""
    if not judge:
        raise RubricEvalError("the runs do not name their judge model: a cut-off is fitted for one judge")
    wanted = [i for i in question_items(card) if items is None or i.id in items]
    unknown = sorted(set(items or []) - {i.id for i in question_items(card)})
    if unknown:
        raise RubricEvalError(f"scorecard '{card.id}' has no question item {', '.join(unknown)}", field="--item",
                              hint=f"its question items: {', '.join(i.id for i in question_items(card)) or 'none'}")
    answers, unasked = reviewed_answers(card, verdicts, decided)
    now = {i.id: i for i in (current or card).items}
    return CardFit(card=card.id, judge=judge, runs=list(runs), items=[
        fit_item(item, judge, answers[item.id], unasked[item.id], holdout_fraction=holdout_fraction, seed=seed,
                 fitted_at=fitted_at, now=now.get(item.id), made=(made or {}).get(item.id)) for item in wanted])


# -- from a run store ----------------------------------------------------------------------------------------------
def reviewers_statuses(verdicts: Sequence[ScorecardVerdict], reviews: Sequence[Review],
                       task_reviews: Sequence[tuple[float, str, dict[str, str]]]) -> dict[Key, Status]:
    """The reviewers' status per (sample, item), the latest decision counting: review rows on the verdict's version
    and card review tasks (saved at, sample, every item's status)."""
    versions = {v.sample_id: v.version for v in verdicts}
    events: list[tuple[float, str, str, Status]] = []
    for at, sample, statuses in task_reviews:
        events += [(at, sample, item, cast(Status, status)) for item, status in statuses.items()
                   if status in ("hit", "clear", "not_applicable")]
    for r in reviews:
        status = REVIEW_STATUS.get(r.decision)
        if status is not None and versions.get(r.sample_id) == r.version:
            events.append((r.created_at, r.sample_id, r.item, status))
    decided: dict[Key, Status] = {}
    for _, sample, item, status in sorted(events, key=lambda e: e[0]):
        if sample in versions:
            decided[(sample, item)] = status
    return decided


def _task_reviews(runs: Any, run_id: str, card_id: str) -> list[tuple[float, str, dict[str, str]]]:
    from rubriceval.audit.team_cards import statuses_of

    if not runs.conn.table_exists("team_reviews"):
        return []
    rows = runs.conn.execute("SELECT saved_at, sample_id, tags FROM team_reviews WHERE run_id = ? AND scorer = ? "
                             "AND kind = 'score'", (run_id, card_id)).fetchall()
    return [(float(r[0]), str(r[1]), statuses_of(r[2] or "")) for r in rows]


class Reviewed(BaseModel):
    """What reviewers decided on one card over one or more runs of one judge: the card as the newest run scored it,
    every verdict (sample ids as `<run id>/<sample id>`) and the reviewers' status per (sample, item)."""

    card: Scorecard
    judge: str
    runs: list[str]
    verdicts: list[ScorecardVerdict]
    decided: dict[Key, Status]


def load_reviewed(store: str | Path, runs: Sequence[str], card_id: str) -> Reviewed:
    """The reviewed decisions of `card_id` in `runs` (weeks) judged by the same judge and asking the same questions."""
    from rubriceval.audit.scorecard_reviews import ReviewStore
    from rubriceval.store.runs import RunStore
    from rubriceval.store.scorecards import ScorecardStore

    store_runs = RunStore(store)
    judges: set[str] = set()
    verdicts: list[ScorecardVerdict] = []
    decided: dict[Key, Status] = {}
    card: Scorecard | None = None
    run_ids = []
    for run in runs:
        run_id = store_runs.resolve(run)
        run_ids.append(run_id)
        judges.add(judge_of_run(store_runs.run_info(run_id).config.judge))
        found = {c.id: c for c in ScorecardStore(store_runs).cards(run_id)}
        if card_id not in found:
            raise RubricEvalError(f"run '{run}' has no scorecard '{card_id}'", field="--card",
                                  hint=f"its scorecards: {', '.join(found) or 'none'}")
        if card is not None and _questions(card) != _questions(found[card_id]):
            raise RubricEvalError(f"run '{run}' asked other questions of '{card_id}' than the runs before it: a cut-off "
                                  "is fitted for one question", field="runs")
        card = found[card_id]
        mine = ScorecardStore(store_runs).verdicts(run_id, card_id)
        statuses = reviewers_statuses(mine, ReviewStore(store_runs).reviews(run_id, card_id),
                                      _task_reviews(store_runs, run_id, card_id))
        verdicts += [v.model_copy(update={"sample_id": f"{run_id}/{v.sample_id}"}) for v in mine]
        decided.update({(f"{run_id}/{s}", i): st for (s, i), st in statuses.items()})
    if len(judges) != 1:
        raise RubricEvalError(f"the runs were judged by {len(judges)} judges ({', '.join(sorted(judges))}): a cut-off "
                              "is fitted for one judge", field="runs")
    assert card is not None
    return Reviewed(card=card, judge=judges.pop(), runs=run_ids, verdicts=verdicts, decided=decided)


def _questions(card: Scorecard) -> dict[str, str | None]:
    return {i.id: i.question for i in question_items(card)}
