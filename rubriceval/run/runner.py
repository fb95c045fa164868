"""Run rubrics and metrics over samples: concurrent, cached, resumable, with live progress.

Samples are judged a window at a time (read from the store, 1,000 by default) and verdicts are written in batches
(store/verdict_batches.py: at least every quarter second and once per window), so memory stays flat on any dataset.
Resuming a run skips the pairs already in the store, so a killed run finishes without losing or duplicating a row;
the judge cache keeps every answered call, so no completed judgment is paid for twice.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sized
from itertools import islice
from typing import Any

from tqdm import tqdm

from rubriceval.core.totals import RunTotals
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.judge.client import CallStats, JudgeClient
from rubriceval.rubric.applies import applies
from rubriceval.rubric.schema import Rubric
from rubriceval.run.pool import default_workers, run_in_processes
from rubriceval.safety.redaction import judge_view, record_redactions
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.standard_metrics.scope import metrics_for
from rubriceval.standard_metrics.thresholds import metric_threshold
from rubriceval.store.datasets import WINDOW
from rubriceval.store.runs import RunStore
from rubriceval.store.verdict_batches import VerdictBatches


def plan_units(samples: list[Sample], rubrics: list[Rubric], metrics: list[str]) -> list[tuple[Sample, str, str]]:
    """(sample, scorer, kind) for every judgment the run needs; rubrics and metrics only where they apply
    (single-turn metrics on conversations only in their per-turn form, standard_metrics/scope.py)."""
    units = []
    for s in samples:
        units += [(s, r.id, "rubric") for r in rubrics if applies(r, s)]
        units += [(s, m, "metric") for m in metrics_for(s, metrics)]   # by the sample's kind
    return units


def judge_rubric(rubric: Rubric, sample: Sample, judge: JudgeClient | None, panel: Any = None
                 ) -> Awaitable[Verdict]:
    """A rubric's verdict as a run makes it: by the judge panel, by self-consistency (n calls), or by one call per
    judge item. The Batch API mode (rubriceval/batch/) makes its verdicts through this too."""
    if panel is not None and rubric.judge_items:
        from rubriceval.scoring.panel import score_with_panel

        return score_with_panel(rubric, sample, panel)
    if judge is not None and judge.config.self_consistency > 1 and rubric.judge_items:
        from rubriceval.trust.self_consistency import score_with_self_consistency

        return score_with_self_consistency(rubric, sample, judge, n=judge.config.self_consistency,
                                           temperature=judge.config.self_consistency_temperature)
    return score_rubric(rubric, sample, judge)


async def score_metrics(sample: Sample, metric_names: list[str], *, judge: Any, embedder: Any,
                        options: Any = None) -> list[Verdict]:
    """A sample's standard metrics as a run scores them, together (they share judge calls); options: the run's
    `MetricOptions` (None: defaults)."""
    from rubriceval.standard_metrics.registry import score_sample

    judged, redaction = judge_view(sample, judge is not None and judge.config.redact)
    thresholds = getattr(options, "thresholds", None)
    return [with_passed(record_redactions(verdict, redaction), thresholds)
            for verdict in await score_sample(judged, metric_names, judge=judge, embedder=embedder, options=options)]


def with_passed(verdict: Verdict, thresholds: dict[str, float] | None) -> Verdict:
    """A scored metric verdict's `passed`: its score against the metric's threshold (the run's, else the default;
    standard_metrics/thresholds.py). Unscored stays None: it is counted, not passed or failed."""
    if verdict.score is None or verdict.passed is not None:
        return verdict
    return verdict.model_copy(update={"passed": verdict.score >= metric_threshold(verdict.scorer, {}, thresholds)[0]})


class RunProgress:
    """Samples done, with the judge's running counters; with a judge, judge requests against the dry-run plan's
    count, requests/s and an ETA, refreshed every second (a slow judge finishes a sample only every few calls)."""

    def __init__(self, total: int | None, stats: CallStats, enabled: bool, *, desc: str = "evaluating",
                 unit: str = "sample"):
        self.bar = tqdm(total=total, unit=unit, disable=not enabled, dynamic_ncols=True, desc=desc)
        self.stats = stats
        self.total_samples = total
        self.planned_calls = 0               # planned for the samples seen so far (window by window)
        self.planned_samples = 0
        self.judgments = 0
        self.started = time.perf_counter()
        self.first_requests = stats.requests

    def plan(self, calls: int, samples: int) -> None:
        self.planned_calls += calls
        self.planned_samples += samples

    def calls_line(self) -> str:
        """'judge 12/40 calls 0.3/s ETA 1:33' — the total extrapolated from the samples planned so far."""
        if not self.planned_calls:
            return ""
        done = self.stats.requests - self.first_requests
        total = self.planned_calls
        if self.total_samples and self.planned_samples and self.planned_samples < self.total_samples:
            total = round(self.planned_calls * self.total_samples / self.planned_samples)
        elapsed = time.perf_counter() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = tqdm.format_interval(max(0, total - done) / rate) if rate > 0 else "?"
        return f"judge {done}/{total} calls {rate:.2f}/s ETA {eta} "

    def update(self, samples: int, judgments: int | None = None) -> None:
        s = self.stats
        self.judgments = self.judgments if judgments is None else judgments
        self.bar.set_postfix_str(self.calls_line() + f"judgments={self.judgments} calls={s.calls} "
                                 f"cached={s.cache_hits} tok={s.prompt_tokens + s.completion_tokens} "
                                 f"${s.cost_usd:.4f}" + (f" fail={sum(s.failures.values())}" if s.failures else ""),
                                 refresh=False)
        self.bar.update(samples)

    async def tick(self, every_s: float = 1.0) -> None:
        while True:
            await asyncio.sleep(every_s)
            self.update(0)
            self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def planned_calls(work: list[tuple[Sample, str, list[tuple[str, str]]]], rubrics: dict[str, Rubric], judge: Any,
                  metric_options: Any) -> int:
    """The judge calls the dry run plans for these samples' wanted (scorer, kind) pairs (run/planning.py)."""
    from rubriceval.run.planning import planned_judge_calls

    count = 0
    for sample, _, wanted in work:
        count += sum(1 for _ in planned_judge_calls(
            [sample], [rubrics[sid] for sid, kind in wanted if kind == "rubric"],
            [sid for sid, kind in wanted if kind == "metric"], judge.config, metric_options=metric_options))
    return count


def _windows(samples: Iterable[Sample], size: int) -> Iterator[list[tuple[Sample, str]]]:
    it = iter(samples)
    while chunk := list(islice(it, size)):
        yield [(s, s.input_hash()) for s in chunk]


async def sample_verdicts(sample: Sample, wanted: list[tuple[str, str]], rubrics: dict[str, Rubric], *,
                          judge: JudgeClient | None, panel: Any, embedder: Any, metric_options: Any
                          ) -> AsyncIterator[Verdict]:
    """One sample's verdicts for the wanted (scorer, kind) pairs: its rubrics (concurrently when a judge is
    asked), then its metrics together. The one path of a run, in-process or in a worker (runner_pool.py)."""
    jobs = [judge_rubric(rubrics[sid], sample, judge, panel) for sid, kind in wanted if kind == "rubric"]
    waits = judge is not None or panel is not None
    for coro in asyncio.as_completed(jobs) if waits and len(jobs) > 1 else jobs:
        yield await coro
    metric_names = [sid for sid, kind in wanted if kind == "metric"]
    if metric_names:
        for verdict in await score_metrics(sample, metric_names, judge=judge, embedder=embedder,
                                           options=metric_options):
            yield verdict


async def execute(store: RunStore, run_id: str, samples: Iterable[Sample] | None, rubrics: list[Rubric],
                  metrics: list[str], *, judge: JudgeClient | None, embedder: Any = None, progress: bool = True,
                  max_samples_in_flight: int | None = None,
                  on_verdict: Callable[[Verdict], None] | None = None, panel: Any = None,
                  window: int = WINDOW, metric_options: Any = None, workers: int | None = 1,
                  shard: tuple[int, int] | None = None, on_window: Callable[[int], None] | None = None,
                  accept: Callable[[Verdict], Verdict] | None = None) -> RunTotals:
    """Judge a run window by window: `window` samples are read (from the store when `samples` is None), their
    missing (sample, scorer) pairs judged concurrently, their verdicts written in batches; memory stays flat at
    any dataset size. panel: a `rubriceval.scoring.panel.JudgePanel` that judges the rubrics (the judge then
    serves metrics). metric_options: the standard metrics' `MetricOptions` (None: defaults).

    workers: processes for a stored run without judge, panel, embedder or on_verdict (runner_pool.py), each
    judging every n-th window: 1 (default) this process only; None one per idle core for a big run (the CLI's
    choice: workers are spawned, which re-imports a script's main module, so a library caller opts in).
    shard (i, n): judge only every n-th window from the i-th (what one worker does); on_window(samples) is
    called after each window written. accept: what marks a rubric verdict pending review under its rubric's
    auto_accept target (trust/rubric_selective.RubricAcceptance; None: fitted here when a rubric states one)."""
    started = time.perf_counter()
    stats = judge.stats if judge is not None else panel.stats if panel is not None else CallStats()
    n_samples = len(samples) if isinstance(samples, Sized) else store.run_info(run_id).n_samples if samples is None \
        else None
    offline = judge is None and panel is None and embedder is None      # nothing waits on the network
    if offline and samples is None and shard is None and on_verdict is None:
        n_workers = workers if workers is not None else default_workers(n_samples)
        if n_workers > 1:
            return await run_in_processes(execute, store, run_id, rubrics, metrics, metric_options=metric_options,
                                          window=window, workers=n_workers, progress=progress, total=n_samples)
    totals = RunTotals()
    bar = RunProgress(n_samples if shard is None else None, stats, progress)
    by_id = {r.id: r for r in rubrics}
    resuming = store.has_verdicts(run_id)
    batches = VerdictBatches(store, run_id)
    windows = store.sample_windows(run_id, window) if samples is None else _windows(samples, window)
    # Bound samples in flight inside a window; the judge client bounds the calls themselves.
    limit = asyncio.Semaphore(max_samples_in_flight or max(4, 2 * (judge.config.concurrency if judge else 8)))

    if accept is None and any(r.auto_accept is not None for r in rubrics):
        from rubriceval.trust.rubric_selective import RubricAcceptance  # issue 44: a rubric target

        accept = RubricAcceptance(store, run_id, rubrics)

    def record(verdict: Verdict, input_hash: str) -> None:
        if accept is not None:
            verdict = accept(verdict)
        batches.add(verdict, input_hash)
        totals.count(verdict.scored, verdict.unscored_kind)
        totals.embedding_calls += verdict.usage.embedding_calls
        if on_verdict:
            on_verdict(verdict)

    async def run_sample(sample: Sample, input_hash: str, wanted: list[tuple[str, str]]) -> None:
        async with limit:
            async for verdict in sample_verdicts(sample, wanted, by_id, judge=judge, panel=panel, embedder=embedder,
                                                 metric_options=metric_options):
                record(verdict, input_hash)
            bar.update(1, totals.units_done)

    ticker = asyncio.ensure_future(bar.tick()) if progress and not offline else None
    try:
        for number, chunk in enumerate(windows):
            if shard is not None and number % shard[1] != shard[0]:
                continue
            done = store.done_keys_for(run_id, [s.id for s, _ in chunk]) if resuming else set()
            work = []
            for sample, input_hash in chunk:
                units = plan_units([sample], rubrics, metrics)
                wanted = [(scorer, kind) for _, scorer, kind in units if (sample.id, scorer) not in done]
                totals.units_total += len(units)
                totals.units_skipped += len(units) - len(wanted)
                if wanted:
                    work.append((sample, input_hash, wanted))
            if judge is not None and progress and panel is None:
                bar.plan(planned_calls(work, by_id, judge, metric_options), len(chunk))
            bar.update(len(chunk) - len(work), totals.units_done)     # samples finished before (resume)
            if offline:
                for job in work:                     # no task per sample: nothing to wait for
                    await run_sample(*job)
                await asyncio.sleep(0)               # let Ctrl-C (asyncio.run cancels the task) in once a window
            else:
                await asyncio.gather(*(run_sample(*job) for job in work))
            batches.flush()                          # at least one transaction per window
            if on_window:
                on_window(len(chunk))
    finally:
        if ticker is not None:
            ticker.cancel()
        batches.flush()
        bar.close()
        totals.wall_s = time.perf_counter() - started
        totals.judge = stats.as_dict()
    return totals
