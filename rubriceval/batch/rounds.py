"""A batch run, round by round.

  round 1   the dry-run planner's calls (rubric items, first metric steps, scorecard questions), minus what the
            judge cache answers
  collect   read the finished batches' results; replay every unfinished judgment through its scorer with the
            replies (`replay.BatchJudge`): finished ones are saved as verdicts, the calls still wanted — second
            steps, re-asks, requests that failed or expired — make the next round (or are made online with
            `finish_online`)
  …         until every judgment has its verdict; the run is then `complete`, like an online run

Scorecards are judgments too (batch/scorecards.py): scored after their window's rubric verdicts are stored.

Judgments are replayed a window at a time (samples streamed from the store), so memory does not grow with the run.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.batch.collect import IngestCounts, collect_offline, refresh_provider_files
from rubriceval.batch.endpoints import RUN_JUDGE, RunJudges, check_providers, judges_of_run
from rubriceval.batch.plan import CustomIds, first_round, prices_by_custom_id, unit_calls_without_reply, wanted_requests
from rubriceval.batch.provider import BatchProvider
from rubriceval.batch.replay import CURRENT_UNIT, BatchJudge, BatchPending, ReplayBook, WantedCall
from rubriceval.batch.scorecards import replay_scorecards, run_scorecards, scorecard_units
from rubriceval.batch.submit import submit_files, write_round
from rubriceval.common.errors import RubricEvalError
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.embed.config import EmbedderConfig
from rubriceval.judge.cache import CallCache
from rubriceval.judge.client import CallStats, JudgeClient
from rubriceval.judge.config import JudgeConfig, default_cache_dir
from rubriceval.rubric.applies import applies
from rubriceval.rubric.schema import Rubric
from rubriceval.run.metric_config import stored_metric_options
from rubriceval.run.runner import judge_rubric, score_metrics
from rubriceval.scoring.panel import JudgePanel
from rubriceval.store.batches import BatchStore, RequestCounts
from rubriceval.store.location import folder_beside_store
from rubriceval.store.runs import RunStore, rubrics_from_run

WINDOW = 256                  # samples whose judgments are replayed together
PLAN_WINDOW = 1000            # samples planned together for round 1
Unit = tuple[Sample, str, "Rubric | None", list[str]]     # sample, its input hash, a rubric or the metrics
BATCH_STATUS = "batch"        # a run waiting for its batches (not "running": no process is working on it)


class RoundReport(BaseModel):
    """What one collect (or the first submit) did, and where the run stands."""

    round: int = 0
    submitted: int = 0                   # requests written (and submitted) in a new round now
    new_batches: list[str] = Field(default_factory=list)
    read: IngestCounts = Field(default_factory=IngestCounts)
    saved: int = 0                       # verdicts saved now
    units_total: int = 0
    units_done: int = 0
    scorecard_units: int = 0             # of units_total: scorecard verdicts (printed on a line of their own)
    scorecards_saved: int = 0            # of saved
    gave_up: int = 0                     # calls settled as errors after too many failed attempts
    requests: RequestCounts = Field(default_factory=RequestCounts)
    complete: bool = False
    timings: dict[str, float] = Field(default_factory=dict)   # seconds per step (plan_and_write, submit, read, …)


class BatchRun:
    """One run judged through batches: its stores, judge settings, files directory and provider (None offline)."""

    def __init__(self, runs: RunStore, run_id: str, config: JudgeConfig, *, directory: Path, offline: bool,
                 embedder: object = None, embedder_config: EmbedderConfig | None = None, workers: int = 1,
                 panel: Any = None):
        """embedder: for metrics that embed text (called online); embedder_config: the same for worker processes
        (`workers` > 1 replays big runs in that many processes, see batch/parallel.py); panel: the run's judge
        panel (`PanelConfig`) with its keys (default: the panel the run stored, keys from `config` or each
        judge's api_key_env)."""
        self.runs = runs
        self.batches = BatchStore(runs)
        self.run_id = run_id
        self.config = config
        self.directory = Path(directory)
        self.offline = offline
        self.embedder = embedder
        self.embedder_config = embedder_config
        self.workers = workers
        self.window = WINDOW
        self.rubrics, metrics = rubrics_from_run(runs, run_id)
        self.accept = None          # issue 44: a rubric's auto_accept target, fitted once as an online run does
        if any(r.auto_accept is not None for r in self.rubrics):
            from rubriceval.trust.rubric_selective import RubricAcceptance

            self.accept = RubricAcceptance(runs, run_id, self.rubrics)
        # In the order they were asked for: a call they share is charged to the first, as in an online run.
        ordered = runs.run_info(run_id).config.metrics
        self.metrics = [m for m in ordered if m in metrics] + [m for m in metrics if m not in ordered]
        # The standard metrics' options the run was started with (--metric-option): scored as an online run would be.
        self.metric_options = stored_metric_options(runs.run_info(run_id).config.metric_options, run_id)
        self.scorecards = run_scorecards(runs, run_id)          # the versions the run started with
        self.judges = judges_of_run(config, runs.run_info(run_id).config.panel, self.metrics, panel,
                                    scorecards=self.scorecards)
        if not offline:
            check_providers(self.judges)
        self.cache = CallCache(config.cache_path or default_cache_dir() / "judge_cache.sqlite") if config.cache \
            else None
        # One provider client per endpoint (a panel's judges may sit at different providers, with their own keys).
        self.providers = {} if offline else {
            # check_providers (above) refused an endpoint without a base_url
            e.name: BatchProvider(e.config.base_url or "", e.config.api_key, timeout_s=max(e.config.timeout_s, 300.0))
            for e in self.judges.endpoints}

    @property
    def provider(self) -> BatchProvider | None:
        """The provider of a run with one endpoint (None offline)."""
        return next(iter(self.providers.values())) if len(self.providers) == 1 else None

    def submit_written(self) -> list[str]:
        """Upload and create batches for the files not submitted yet, at each one's endpoint; the new batch ids."""
        return [batch_id for endpoint in self.judges.endpoints if endpoint.name in self.providers
                for batch_id in submit_files(self.batches, self.providers[endpoint.name], self.run_id,
                                             endpoint.config, endpoint.name)]

    def online_judges(self, only: list[str] | None = None) -> dict[str, JudgeClient]:
        """Online clients for `batch collect --finish-online`: every judge's, or only those named (panel judges)."""
        from rubriceval.local.backends import make_judge

        unknown = [name for name in only or [] if name not in self.judges.configs]
        if unknown:
            raise RubricEvalError(f"no panel judge named '{unknown[0]}' in this run",
                                  field="--finish-online-judge",
                                  hint=f"its judges: {', '.join(n for n in self.judges.configs if n) or '(no panel)'}")
        return {name: make_judge(config, announce=False) for name, config in self.judges.configs.items()
                if only is None or name in only}

    def close(self) -> None:
        for provider in self.providers.values():
            provider.close()
        if self.cache is not None:
            self.cache.close()

    # -- round 1 --------------------------------------------------------------------------------------------------
    def submit_first_round(self) -> RoundReport:
        """Plan round 1 over the run's stored samples (a window at a time), write and submit it."""
        report = RoundReport(round=1)
        started = time.perf_counter()

        def windows() -> Iterator[list[Sample]]:
            for pairs in self.runs.sample_windows(self.run_id, PLAN_WINDOW):
                samples = [sample for sample, _ in pairs]
                report.units_total += sum(len(scorers) for sample in samples
                                          for _, _, scorers in units_of(sample, self.rubrics, self.metrics))
                report.units_total += scorecard_units(self.scorecards, samples)
                yield samples

        requests = first_round(windows(), self.rubrics, self.metrics, self.config, self.cache,
                               CustomIds(self.run_id, 1), self.judges, scorecards=self.scorecards,
                               metric_options=self.metric_options)
        report.submitted = write_round(self.batches, self.run_id, 1, requests, self.directory, self.judges,
                                       offline=self.offline)
        report.timings["plan_and_write_s"] = time.perf_counter() - started
        if self.providers:
            started = time.perf_counter()
            report.new_batches = self.submit_written()
            report.timings["submit_s"] = time.perf_counter() - started
        self.runs.set_status(self.run_id, BATCH_STATUS, {"batch": {"units_total": report.units_total}})
        report.requests = self.batches.counts(self.run_id)
        return report

    # -- later rounds ---------------------------------------------------------------------------------------------
    async def collect(self, *, source: Path | None = None,
                      finish_online: JudgeClient | dict[str, JudgeClient] | None = None,
                      submit: bool = True) -> RoundReport:
        """Read what has finished, save the verdicts it completes, and ask the calls still wanted (a new round, or
        online through `finish_online`: a client for a run without panel, else judge name → client, only for the
        judges to finish online — the others' calls go to a new round)."""
        report = RoundReport()
        started = time.perf_counter()
        if self.providers:
            self.submit_written()                                        # a submit a crash cut short
            for endpoint in self.judges.endpoints:
                report.read.add(refresh_provider_files(self.batches, self.providers[endpoint.name], self.run_id,
                                                       self.directory, endpoint.config.batch_prices(),
                                                       endpoint.name))
        elif source is not None:
            report.read = collect_offline(self.batches, self.run_id, source, prices_by_custom_id(self.judges))
        report.timings["read_s"] = time.perf_counter() - started
        started = time.perf_counter()
        while True:
            if not finish_online and self._parallel():
                from rubriceval.batch.parallel import replay_in_processes

                wanted = await asyncio.to_thread(replay_in_processes, self, report, self.workers)
            else:
                wanted = await self.replay(report, finish_online)
            asked, gave_up = self._sort_wanted(wanted)
            report.gave_up += gave_up
            if not gave_up:
                break                        # settled calls change answers: replay once more, else done
        report.timings["verdicts_s"] = time.perf_counter() - started
        started = time.perf_counter()
        round_no = self.batches.current_round(self.run_id) + 1
        if asked and submit:
            ids = CustomIds(self.run_id, round_no)
            report.submitted = write_round(self.batches, self.run_id, round_no,
                                           wanted_requests(asked, ids, self.judges), self.directory, self.judges,
                                           offline=self.offline)
            self.batches.retire(self.run_id, [call.key for call in asked])
            if self.providers:
                report.new_batches = self.submit_written()
        report.timings["next_round_s"] = time.perf_counter() - started
        report.round = self.batches.current_round(self.run_id)
        report.requests = self.batches.counts(self.run_id)
        report.complete = report.units_done == report.units_total
        stats = {"units_total": report.units_total, "units_done": report.units_done,
                 "batch": {"units_total": report.units_total, **report.requests.model_dump()}}
        self.runs.set_status(self.run_id, "complete" if report.complete else BATCH_STATUS, stats)
        return report

    def _parallel(self) -> bool:
        """Worth splitting over processes: several workers, many judgments left, an embedder they can rebuild."""
        from rubriceval.batch.parallel import MIN_JUDGMENTS

        if self.workers < 2 or (self.embedder is not None and self.embedder_config is None):
            return False
        info = self.runs.run_info(self.run_id)
        left = int((info.stats.get("batch") or {}).get("units_total") or 0) - self.judgments_done()
        return left >= MIN_JUDGMENTS

    def judgments_done(self) -> int:
        """Verdicts stored: the rubrics' and metrics', and the scorecards' (a table of their own)."""
        from rubriceval.store.scorecards import ScorecardStore

        done = self.runs.run_info(self.run_id).n_verdicts
        return done + (ScorecardStore(self.runs).count(self.run_id) if self.scorecards else 0)

    def _sort_wanted(self, wanted: list[WantedCall]) -> tuple[list[WantedCall], int]:
        """The wanted calls to ask in a new round (never one still in flight); calls that failed more than
        judge.max_retries times are settled as errors instead. Returns (to ask, settled)."""
        asked, gave_up = [], 0
        states = self.batches.key_states(self.run_id, [call.key for call in wanted])
        for call in wanted:
            rows = states.get(call.key, [])
            if any(state in ("queued", "submitted", "answered") for state, _ in rows):
                continue
            failures = [error for state, error in rows if state in ("failed", "expired", "retried")]
            if len(failures) > self.config.max_retries:
                self.batches.give_up(self.run_id, call.key, f"{failures[-1]} (asked {len(failures)} times)")
                gave_up += 1
            else:
                asked.append(call)
        return asked, gave_up

    async def replay(self, report: RoundReport, finish_online: JudgeClient | dict[str, JudgeClient] | None = None,
                     shard: tuple[int, int] | None = None) -> list[WantedCall]:
        """Every judgment without a verdict, through its scorer with the collected replies; saves the finished
        ones and returns the calls still wanted. Samples are read and judgments replayed a window at a time;
        `shard` (i, n): only every n-th window from the i-th (one of n processes)."""
        book = ReplayBook(self.batches, self.run_id, self.cache)
        judge, panel = self._replay_judges(book, finish_online)
        report.units_total = report.units_done = report.scorecard_units = 0
        loop = asyncio.get_running_loop()
        previous_handler = loop.get_exception_handler()
        loop.set_exception_handler(_quiet_pending(previous_handler))
        try:
            for number, samples in enumerate(self.runs.sample_windows(self.run_id, self.window)):
                if shard is not None and number % shard[1] != shard[0]:
                    continue
                done = self.runs.done_keys_for(self.run_id, [sample.id for sample, _ in samples])
                units: list[Unit] = []
                for sample, input_hash in samples:
                    for rubric, names, scorers in units_of(sample, self.rubrics, self.metrics):
                        report.units_total += len(scorers)
                        todo = [s for s in scorers if (sample.id, s) not in done]
                        report.units_done += len(scorers) - len(todo)
                        if todo:
                            units.append((sample, input_hash, rubric, [n for n in names if n in todo]))
                if units:
                    await self._replay_window(units, judge, panel, report)
                await replay_scorecards(self, [sample for sample, _ in samples], judge, report)
        finally:
            loop.set_exception_handler(previous_handler)
            book.flush_cache()
        return list(book.wanted.values())

    def _replay_judges(self, book: ReplayBook, finish_online: JudgeClient | dict[str, JudgeClient] | None
                       ) -> tuple[BatchJudge, JudgePanel | None]:
        """The run's judge and, for a panel's run, the panel — each judge answered from the book, as the online
        run's judge and panel (same settings, names, min_scored), so the same scorers make the same verdicts."""
        online = finish_online if isinstance(finish_online, dict) else (
            {} if finish_online is None else {RUN_JUDGE: finish_online})
        if self.judges.is_panel and set(online) - set(self.judges.configs):
            raise ValueError("a panel's run finishes online with a client per judge name (BatchRun.online_judges)")
        stats = CallStats()
        judge = BatchJudge(self.judges.configs.get(RUN_JUDGE, self.config), book, stats,
                           online=online.get(RUN_JUDGE))
        if not self.judges.is_panel:
            return judge, None
        members = [(j.name, BatchJudge(self.judges.configs[j.name], book, stats, judge=j.name,
                                       online=online.get(j.name))) for j in self.judges.panel.judges]
        return judge, JudgePanel(members, min_scored=self.judges.min_scored)

    async def _replay_window(self, units: list[Unit], judge: BatchJudge, panel: JudgePanel | None,
                             report: RoundReport) -> None:
        before = asyncio.all_tasks()
        results = await asyncio.gather(*(self._unit(sample, rubric, names, judge, panel)
                                         for sample, _, rubric, names in units))
        # Calls a stopped unit's sibling tasks still make are recorded too: let them finish before going on.
        while any(not task.done() for task in asyncio.all_tasks() - before):
            await asyncio.sleep(0)
        finished = [(self.accept(verdict) if self.accept is not None else verdict, input_hash)
                    for (_, input_hash, _, _), verdicts in zip(units, results) for verdict in verdicts or []]
        self.want_unit_calls([(sample, rubric) for (sample, _, rubric, _), verdicts in zip(units, results)
                              if verdicts is None and rubric is not None], judge.book)
        self.runs.save_verdicts(self.run_id, finished)         # one transaction per window
        report.saved += len(finished)
        report.units_done += len(finished)
        judge.book.flush_cache()

    def want_unit_calls(self, stopped: list[tuple[Sample, Rubric]], book: ReplayBook,
                        stopped_cards: Sequence[tuple[Sample, Any]] = ()) -> None:
        """A rubric (or a scorecard) stopped for a missing reply: its other planned calls without a reply are wanted
        now too."""
        def answered(key: str) -> bool:
            return key in book.wanted or book.batches.reply_for(self.run_id, key) is not None or (
                self.cache is not None and key in self.cache)

        units = [(sample, rubric, None) for sample, rubric in stopped] + [(s, None, c) for s, c in stopped_cards]
        for sample, rubric, card in units:
            for call in unit_calls_without_reply(sample, rubric, self.config, self.judges, answered, scorecard=card):
                book.wanted[call.key] = call

    async def _unit(self, sample: Sample, rubric: Rubric | None, names: list[str], judge: BatchJudge,
                    panel: JudgePanel | None) -> list[Verdict] | None:
        CURRENT_UNIT.set((sample.id, rubric.id if rubric is not None else names[0]))
        try:
            if rubric is not None:
                return [await judge_rubric(rubric, sample, judge, panel)]
            return await score_metrics(sample, names, judge=judge, embedder=self.embedder,
                                       options=self.metric_options)
        except BatchPending:
            return None


def start_batch_run(samples: list[Sample], rubrics: list[Rubric], metrics: list[str], *, store: RunStore,
                    judge_config: JudgeConfig, directory: Path | None = None, offline: bool = False,
                    embedder_config: EmbedderConfig | None = None, name: str | None = None, dataset_path: str = "",
                    rubrics_path: str = "", metric_options: object = None,
                    panel_config: Any = None, scorecards: Any = None) -> tuple[BatchRun, RoundReport]:
    """A new run judged through batches: created like an online run (`api.start_run`), round 1 written and (unless
    `offline`) submitted. Files go to `directory` (default: batches/<run id> beside the store file; out/batches/<run
    id> for a PostgreSQL store). Close the returned BatchRun when done; later, `collect` it (a new BatchRun over the
    same run id works after a restart).
    metric_options: the standard metrics' `MetricOptions` (None: defaults), stored with the run and read back by
    every BatchRun over it.
    panel_config: a `PanelConfig` whose judges judge the rubrics (the judge then serves the metrics), as online:
    each judge's calls go to its own endpoint's files and batches (rubriceval/batch/endpoints.py).
    scorecards: `Scorecard`s scored after the rubrics (their questions asked by the run's judge, in the same
    rounds), stored with the run as an online run stores them."""
    from rubriceval.run.evaluate import start_run
    from rubriceval.run.scorecard_stage import check_rubric_references, needs_judge, prepare_scorecards

    check_rubric_references(list(scorecards or []), [r.id for r in rubrics])
    if not offline:          # refused before the run is created
        check_providers(RunJudges(judge_config, panel_config,
                                  needs_run_judge=bool(metrics) or needs_judge(list(scorecards or []))))
    run_id, rubrics = start_run(samples, rubrics, metrics, store=store, judge_config=judge_config,
                                embedder_config=embedder_config, name=name, dataset_path=dataset_path,
                                rubrics_path=rubrics_path, metric_options=metric_options, panel_config=panel_config)
    if scorecards:
        prepare_scorecards(store, run_id, scorecards, rubrics, resumed=False)
    batch_run = BatchRun(store, run_id, judge_config, offline=offline, panel=panel_config,
                         directory=directory or folder_beside_store(store.path) / "batches" / run_id)
    return batch_run, batch_run.submit_first_round()


def units_of(sample: Sample, rubrics: list[Rubric], metrics: list[str]
             ) -> Iterator[tuple[Rubric | None, list[str], list[str]]]:
    """A sample's judgments as the replay makes them: each applicable rubric alone, the metrics together (they
    share calls). Yields (rubric or None, metric names, scorer names)."""
    for rubric in rubrics:
        if applies(rubric, sample):
            yield rubric, [], [rubric.id]
    if metrics:
        yield None, list(metrics), list(metrics)



def _quiet_pending(previous):
    """A loop exception handler that drops 'Task exception was never retrieved' for BatchPending (a stopped unit's
    sibling calls end that way by design)."""
    def handler(loop, context):
        if isinstance(context.get("exception"), BatchPending):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)
    return handler
