"""Scorecards in a batch run (docs/scorecards.md): scored by the online scorer (`scorecard.score.score_scorecard`)
with the batch judge answering from the collected replies, a window of samples at a time, after that window's
rubric verdicts are stored (what `rubric:` items read; a scorecard whose rubric has no verdict yet waits for it).

A scorecard that reaches a call with no reply yet stops (`BatchPending`) and is finished in a later collect; its
planned calls still without a reply are wanted for the next round together (not one question per round). A
(sample, scorecard) already stored — by an earlier collect, or a worker process — is skipped: `ScorecardStore.done`.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rubriceval.batch.replay import CURRENT_UNIT, BatchJudge, BatchPending
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.rubric.applies import applies
from rubriceval.run.scorecard_stage import referenced_rubrics, rubric_verdicts_of
from rubriceval.scorecard.applicability import card_applies
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.scorecard.verdict import ScorecardVerdict
from rubriceval.store.scorecards import ScorecardStore

if TYPE_CHECKING:
    from rubriceval.batch.rounds import BatchRun, RoundReport


def run_scorecards(runs: Any, run_id: str) -> list[Scorecard]:
    """The scorecard versions the run started with (none for most runs)."""
    return ScorecardStore(runs).cards(run_id)


def scorecard_units(cards: list[Scorecard], samples: list[Sample]) -> int:
    """How many scorecard verdicts these samples take (one per sample and scorecard of its scope)."""
    return sum(1 for card in cards for sample in samples if card_applies(card, sample))


async def replay_scorecards(batch_run: BatchRun, samples: list[Sample], judge: BatchJudge,
                            report: RoundReport) -> None:
    """This window's scorecards without a stored verdict: scored and saved, or left (with their missing calls
    wanted) for a later collect. Counts every (sample, scorecard) in the report's judgments."""
    cards = batch_run.scorecards
    if not cards:
        return
    store = ScorecardStore(batch_run.runs)
    run_id = batch_run.run_id
    referenced = referenced_rubrics(cards)
    rubrics = {r.id: r for r in batch_run.rubrics if r.id in referenced}
    verdicts = rubric_verdicts_of(batch_run.runs, run_id, referenced, [s.id for s in samples])
    ready: list[tuple[Sample, Scorecard]] = []
    waiting: list[tuple[Sample, Scorecard]] = []
    for card in cards:
        mine = [s for s in samples if card_applies(card, s)]
        done = store.done(run_id, card.id, [s.id for s in mine])
        report.units_total += len(mine)
        report.scorecard_units += len(mine)
        report.units_done += len(done)
        for sample in (s for s in mine if s.id not in done):
            have = verdicts.get(sample.id, {})
            unjudged = [ref for ref in referenced_rubrics([card])
                        if ref in rubrics and ref not in have and applies(rubrics[ref], sample)]
            (waiting if unjudged else ready).append((sample, card))
    results = await asyncio.gather(*(_score(card, sample, judge, verdicts.get(sample.id, {}), run_id)
                                     for sample, card in ready))
    finished = [v for v in results if v is not None]
    if finished:           # issue 44: a decision outside its item's accepted region waits for review
        from rubriceval.trust.selective_reviews import RunAcceptance

        accept = RunAcceptance(batch_run.runs, run_id, cards)
        finished = [accept(v) for v in finished]
    stopped = [pair for pair, verdict in zip(ready, results) if verdict is None] + waiting
    batch_run.want_unit_calls([], judge.book, stopped)
    store.save(run_id, finished)
    report.saved += len(finished)
    report.scorecards_saved += len(finished)
    report.units_done += len(finished)


async def _score(card: Scorecard, sample: Sample, judge: BatchJudge, verdicts: dict[str, Verdict], run_id: str
                 ) -> ScorecardVerdict | None:
    CURRENT_UNIT.set((sample.id, card.scorer))
    try:
        return await score_scorecard(card, sample, judge, verdicts, run_id=run_id)
    except BatchPending:
        return None
