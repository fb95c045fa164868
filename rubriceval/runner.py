"""Run rubrics and metrics over samples: concurrent, cached, resumable, with live progress.

Each (sample, scorer) verdict is saved the moment it exists. Resuming a run skips the pairs already in the store, so a
killed run finishes without repeating a completed judgment or losing/duplicating a row.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from tqdm import tqdm

from rubriceval.data.sample import Sample
from rubriceval.judge.client import CallStats, JudgeClient
from rubriceval.metric_scope import metrics_for
from rubriceval.rubric.applies import applies
from rubriceval.rubric.schema import Rubric
from rubriceval.safety.redaction import judge_view, record_redactions
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.store.runs import RunStore
from rubriceval.verdict import Verdict


@dataclass
class RunTotals:
    units_total: int = 0
    units_done: int = 0
    units_skipped: int = 0          # already in the store (resume)
    scored: int = 0
    unscored: int = 0
    unscored_by_kind: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    judge: dict[str, Any] = field(default_factory=dict)
    embedding_calls: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def count(self, scored: bool, unscored_kind: str | None = None) -> None:
        """One more judgment done: scored, or unscored of this kind (counted, never averaged)."""
        self.units_done += 1
        if scored:
            self.scored += 1
        else:
            self.unscored += 1
            kind = unscored_kind or "error"
            self.unscored_by_kind[kind] = self.unscored_by_kind.get(kind, 0) + 1


def plan_units(samples: list[Sample], rubrics: list[Rubric], metrics: list[str]) -> list[tuple[Sample, str, str]]:
    """(sample, scorer, kind) for every judgment the run needs; rubrics and metrics only where they apply
    (single-turn metrics on conversations only in their per-turn form, rubriceval/metric_scope.py)."""
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
    n = judge.config.self_consistency if judge is not None else 1
    if n > 1 and rubric.judge_items:
        from rubriceval.trust.self_consistency import score_with_self_consistency

        return score_with_self_consistency(rubric, sample, judge, n=n,
                                           temperature=judge.config.self_consistency_temperature)
    return score_rubric(rubric, sample, judge)


async def score_metrics(sample: Sample, metric_names: list[str], *, judge: Any, embedder: Any) -> list[Verdict]:
    """A sample's standard metrics as a run scores them, together (they share judge calls)."""
    from standard_metrics.registry import score_sample

    judged, redaction = judge_view(sample, judge is not None and judge.config.redact)
    return [record_redactions(verdict, redaction)
            for verdict in await score_sample(judged, metric_names, judge=judge, embedder=embedder)]


class _Progress:
    def __init__(self, total: int, stats: CallStats, enabled: bool, initial: int = 0):
        self.bar = tqdm(total=total, initial=initial, unit="judgment", disable=not enabled, dynamic_ncols=True,
                        desc="evaluating")
        self.stats = stats

    def update(self, n: int = 1) -> None:
        s = self.stats
        self.bar.set_postfix_str(f"calls={s.calls} cached={s.cache_hits} tok={s.prompt_tokens + s.completion_tokens}"
                                 f" ${s.cost_usd:.4f}" + (f" fail={sum(s.failures.values())}" if s.failures else ""),
                                 refresh=False)
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


async def execute(store: RunStore, run_id: str, samples: list[Sample], rubrics: list[Rubric], metrics: list[str], *,
                  judge: JudgeClient | None, embedder: Any = None, progress: bool = True,
                  max_samples_in_flight: int | None = None,
                  on_verdict: Callable[[Verdict], None] | None = None, panel: Any = None) -> RunTotals:
    """panel: a `rubriceval.scoring.panel.JudgePanel` that judges the rubrics (the judge then serves metrics)."""
    started = time.perf_counter()
    units = plan_units(samples, rubrics, metrics)
    done = store.done_keys(run_id)
    todo = [u for u in units if (u[0].id, u[1]) not in done]
    totals = RunTotals(units_total=len(units), units_skipped=len(units) - len(todo))
    stats = judge.stats if judge is not None else panel.stats if panel is not None else CallStats()
    bar = _Progress(len(units), stats, progress, initial=totals.units_skipped)
    by_id = {r.id: r for r in rubrics}
    per_sample: dict[str, list[tuple[str, str]]] = {}
    sample_of: dict[str, Sample] = {}
    for s, scorer, kind in todo:
        per_sample.setdefault(s.id, []).append((scorer, kind))
        sample_of[s.id] = s
    # Bound samples in flight so memory stays flat on big datasets; the judge client bounds the calls themselves.
    limit = asyncio.Semaphore(max_samples_in_flight or max(4, 2 * (judge.config.concurrency if judge else 8)))

    def record(verdict: Verdict, sample: Sample) -> None:
        store.save_verdict(run_id, verdict, input_hash=sample.input_hash())
        totals.count(verdict.scored, verdict.unscored_kind)
        totals.embedding_calls += verdict.usage.embedding_calls
        if on_verdict:
            on_verdict(verdict)
        bar.update()

    async def run_sample(sample_id: str) -> None:
        async with limit:
            sample = sample_of[sample_id]
            wanted = per_sample[sample_id]
            rubric_ids = [sid for sid, kind in wanted if kind == "rubric"]
            metric_names = [sid for sid, kind in wanted if kind == "metric"]
            jobs = [judge_rubric(by_id[rid], sample, judge, panel) for rid in rubric_ids]
            for coro in asyncio.as_completed(jobs):
                record(await coro, sample)
            if metric_names:
                for verdict in await score_metrics(sample, metric_names, judge=judge, embedder=embedder):
                    record(verdict, sample)

    try:
        await asyncio.gather(*(run_sample(sid) for sid in per_sample))
    finally:
        bar.close()
        totals.wall_s = time.perf_counter() - started
        totals.judge = stats.as_dict()
    return totals
