"""The scorecard stage of a run: after the run's rubrics and metrics, every scorecard scores every sample of its
scope, a window at a time, reading the window's rubric verdicts from the store for `rubric:` items (so a rubric is
never judged twice for a scorecard). Resumable: pairs already stored are skipped. Cached: every question goes
through the judge cache. Verdicts are written as they are made (in batches: at least every half second)."""
from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rubriceval.common.errors import ConfigError
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.scorecard.applicability import card_applies
from rubriceval.scorecard.questions import asks_judge
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.scorecards import ScorecardStore

SAVE_EVERY, SAVE_SECONDS = 200, 0.5


@dataclass
class ScorecardTotals:
    done: int = 0
    skipped: int = 0                  # already stored (resume)
    unscored: int = 0
    fatal: int = 0
    awaiting: int = 0                 # totals awaiting review (an item undecided or pending): not unscored
    usage: Usage = field(default_factory=Usage)

    def count(self, verdict: Any) -> None:
        """One verdict's total in the counts: fatal, awaiting review, or unscored (each apart)."""
        self.done += 1
        self.awaiting += verdict.totals.awaiting_review
        self.unscored += verdict.totals.total is None and not verdict.totals.awaiting_review
        self.fatal += bool(verdict.totals.fatal)
        self.usage = self.usage + verdict.usage

    def as_dict(self) -> dict[str, Any]:
        return {"done": self.done, "skipped": self.skipped, "unscored": self.unscored, "fatal": self.fatal,
                "awaiting": self.awaiting, "usage": self.usage.model_dump()}


def needs_judge(cards: Sequence[Scorecard]) -> bool:
    return any(asks_judge(i) for c in cards for i in c.items)


def check_rubric_references(cards: Sequence[Scorecard], rubric_ids: Sequence[str]) -> None:
    """A `rubric:` item needs that rubric in the same run: say so before anything is judged."""
    for card in cards:
        for item in card.items:
            if item.rubric is not None and item.rubric.id not in rubric_ids:
                raise ConfigError(f"scorecard item '{item.id}' reads rubric '{item.rubric.id}', which this run does "
                                  "not judge", file=card.source_file, field=f"items.{item.id}.rubric.id",
                                  hint="add the rubric to --rubrics (and --only)")


def rubric_verdicts_of(runs: Any, run_id: str, rubric_ids: list[str], sample_ids: list[str]
                     ) -> dict[str, dict[str, Verdict]]:
    """These samples' stored verdicts of these rubrics: sample id → rubric id → verdict (what `rubric:` items read;
    the online stage and the Batch API's replay read them alike)."""
    from rubriceval.store.runs import row_to_verdict

    found: dict[str, dict[str, Verdict]] = {}
    if not rubric_ids or not sample_ids:
        return found
    with runs.lock:
        rows = runs.conn.execute(
            f"SELECT * FROM verdicts WHERE run_id=? AND scorer IN ({','.join('?' * len(rubric_ids))}) AND sample_id IN "
            f"({','.join('?' * len(sample_ids))})", (run_id, *rubric_ids, *sample_ids)).fetchall()
    for row in rows:
        verdict = row_to_verdict(row)
        found.setdefault(verdict.sample_id, {})[verdict.scorer] = verdict
    return found


def planned_sample_calls(card: Scorecard, samples: Sequence[Any], redact: bool = False) -> dict[str, int]:
    """The judge calls the dry run plans for this card (scorecard/plan.py, the count `--dry-run` prints), per sample
    id — the progress bar's first target: a question item counts as one call (an applies_when question or a drafted
    evidence rule may spare calls; a small judge asks an item per turn), and the bar's target moves to what each
    scored conversation asked."""
    from rubriceval.scorecard.plan import planned_questions

    return {s.id: len(planned_questions(card, s, redact) or []) for s in samples}


async def score_run_scorecards(runs: Any, run_id: str, cards: Sequence[Scorecard], judge: Any, *,
                               concurrency: int = 8, progress: bool = False) -> ScorecardTotals:
    """progress: a bar on stderr counting card × conversation pairs, with the judge's calls against the dry-run
    plan, calls/s and an ETA, refreshed every second while the judge works (a run used to show nothing here)."""
    store = ScorecardStore(runs)
    totals = ScorecardTotals()
    if not cards:
        return totals
    from rubriceval.judge.client import CallStats
    from rubriceval.run.runner import RunProgress

    pairs = runs.run_info(run_id).n_samples * len(cards)
    bar = RunProgress(pairs, judge.stats if judge is not None else CallStats(), progress, desc="scorecards",
                    unit="card")
    redact = bool(judge is not None and judge.config.redact)
    ticker = asyncio.ensure_future(bar.tick()) if progress and judge is not None else None
    try:
        await _score_windows(runs, store, run_id, cards, judge, concurrency, totals, bar, redact)
    finally:
        if ticker is not None:
            ticker.cancel()
        bar.close()
    return totals


async def _score_windows(runs: Any, store: ScorecardStore, run_id: str, cards: Sequence[Scorecard], judge: Any,
                         concurrency: int, totals: ScorecardTotals, bar: Any, redact: bool) -> None:
    limit = asyncio.Semaphore(max(1, concurrency))
    referenced = referenced_rubrics(cards)

    # issue 44: with an auto_accept target, a decision outside its item's accepted region waits for review
    from rubriceval.trust.selective_reviews import RunAcceptance

    accept = RunAcceptance(runs, run_id, cards)
    for line in accept.notes():       # "cannot accept anything yet: 0 reviews", said before the judge works
        print(f"note: {line}", file=sys.stderr)

    async def one(card: Scorecard, sample, verdicts: dict[str, Verdict], planned: int):
        async with limit:
            verdict = accept(await score_scorecard(card, sample, judge, verdicts, run_id=run_id))
        asked = verdict.usage.calls + verdict.usage.cache_hits
        # The plan counts a question item as one call: an applies question may spare some, and a small judge asks
        # an item of each turn of its party (scoring/judgement/) — the bar's target follows what was asked.
        if judge is not None and asked != planned:
            bar.plan(asked - planned, 0)
        return verdict

    scored_some: set[str] = set()
    for window in runs.sample_windows(run_id):
        samples = [s for s, _ in window]
        rubric_verdicts = rubric_verdicts_of(runs, run_id, referenced, [s.id for s in samples])
        jobs = []
        for card in cards:
            mine = [s for s in samples if card_applies(card, s)]
            if mine:
                scored_some.add(card.id)
            done = store.done(run_id, card.id, [s.id for s in mine])
            totals.skipped += len(done)
            todo = [s for s in mine if s.id not in done]
            planned = planned_sample_calls(card, todo, redact) if judge is not None else {}
            if judge is not None:
                bar.plan(sum(planned.values()), len(samples))
            bar.update(len(samples) - len(todo), totals.done)       # not in its scope, or stored before (resume)
            jobs += [one(card, s, rubric_verdicts.get(s.id, {}), planned.get(s.id, 0)) for s in todo]
        waiting: list = []
        last = time.monotonic()
        for job in asyncio.as_completed(jobs):
            verdict = await job
            waiting.append(verdict)
            totals.count(verdict)
            bar.update(1, totals.done)
            # Written as they come (a killed run keeps them), batched so a big offline run is not a transaction
            # per conversation.
            if len(waiting) >= SAVE_EVERY or time.monotonic() - last > SAVE_SECONDS:
                store.save(run_id, waiting)
                waiting, last = [], time.monotonic()
        store.save(run_id, waiting)
    idle = [c.id for c in cards if c.id not in scored_some]
    if idle:                      # said, as for rubrics that apply to no sample (a conversation card, single turns)
        print(f"note: scorecard(s) scoring no sample of this dataset (scope): {', '.join(idle)}", file=sys.stderr)


def referenced_rubrics(cards: Sequence[Scorecard]) -> list[str]:
    return sorted({i.rubric.id for c in cards for i in c.items if i.rubric is not None})


def stored_totals(runs: Any, run_id: str) -> ScorecardTotals:
    """The run's stored scorecard verdicts counted as a stage's totals (a batch run's are made over several
    collects): every verdict counts as done."""
    totals = ScorecardTotals()
    for verdict in ScorecardStore(runs).verdicts(run_id):
        totals.count(verdict)
    return totals


def prepare_scorecards(runs: Any, run_id: str, cards: Sequence[Scorecard] | None, rubrics: Sequence[Any], *,
                       resumed: bool) -> list[Scorecard]:
    """The scorecards a run scores: a new run stores the versions it starts with; a resumed run uses those stored
    versions (never a newer file)."""
    store = ScorecardStore(runs)
    if resumed:
        return store.cards(run_id)
    cards = list(cards or [])
    check_rubric_references(cards, [r.id for r in rubrics])
    if cards:
        store.register(run_id, cards)
    return cards
