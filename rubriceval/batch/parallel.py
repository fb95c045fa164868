"""Replaying a big batch run in several processes, one per core: each takes every n-th window of samples.

A judgment's verdict is made by its scorer (prompt rendering, the safety fence, reading the reply): ~1 ms of CPU,
so 100,000 judgments keep one core busy for a minute and a half. The work splits by sample window with nothing
shared but the SQLite files (WAL: one writer at a time, each window's verdicts in one transaction), so n processes
take about 1/n of the time. Used by `BatchRun.collect` when many judgments are left and no call is made online.
"""
from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from rubriceval.batch.replay import WantedCall

if TYPE_CHECKING:
    from rubriceval.batch.rounds import BatchRun, RoundReport

MIN_JUDGMENTS = 20_000       # below this, starting processes costs more than it saves


class ShardResult(BaseModel):
    units_total: int = 0
    units_done: int = 0
    saved: int = 0
    scorecard_units: int = 0
    scorecards_saved: int = 0
    wanted: list[WantedCall] = Field(default_factory=list)


def _replay_shard(run_class: type[BatchRun], report_class: type[RoundReport], store_path: str, run_id: str,
                  config_json: str, embedder_json: str | None, window: int, shard: int, shards: int) -> dict:
    """One worker's shard. The run and report classes come from the caller (batch/rounds.py), pickled by name,
    so this module does not import the module that imports it."""
    from rubriceval.embed.config import EmbedderConfig
    from rubriceval.judge.config import JudgeConfig
    from rubriceval.local.backends import make_embedder
    from rubriceval.store.runs import RunStore

    runs = RunStore(store_path)
    embedder = make_embedder(EmbedderConfig.model_validate_json(embedder_json), announce=False) \
        if embedder_json else None
    batch_run = run_class(runs, run_id, JudgeConfig.model_validate_json(config_json), directory=Path("."),
                         offline=True, embedder=embedder)
    batch_run.window = window
    report = report_class()
    try:
        wanted = asyncio.run(batch_run.replay(report, shard=(shard, shards)))
    finally:
        batch_run.close()
        runs.close()
    return ShardResult(units_total=report.units_total, units_done=report.units_done, saved=report.saved,
                       scorecard_units=report.scorecard_units, scorecards_saved=report.scorecards_saved,
                       wanted=wanted).model_dump()


def replay_in_processes(batch_run: BatchRun, report: RoundReport, workers: int) -> list[WantedCall]:
    """`BatchRun.replay` split over `workers` processes; the report gets their sums, the wanted calls are merged."""
    embedder_json = batch_run.embedder_config.model_dump_json() if batch_run.embedder_config is not None else None
    context = multiprocessing.get_context("spawn")      # no inherited SQLite connections or event loop
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(_replay_shard, type(batch_run), type(report), str(batch_run.runs.path),
                               batch_run.run_id, batch_run.config.model_dump_json(), embedder_json, batch_run.window,
                               shard, workers)
                   for shard in range(workers)]
        results = [ShardResult.model_validate(future.result()) for future in futures]
    report.units_total = sum(r.units_total for r in results)
    report.units_done = sum(r.units_done for r in results)
    report.saved += sum(r.saved for r in results)
    report.scorecard_units = sum(r.scorecard_units for r in results)
    report.scorecards_saved += sum(r.scorecards_saved for r in results)
    wanted = {call.key: call for r in results for call in r.wanted}
    return list(wanted.values())
