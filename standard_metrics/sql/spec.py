"""The declaration of a metric that does its own per-sample work instead of sharing `calls.py`'s judge calls.

The NL2SQL metrics run SQL against a database (in a worker thread, with a timeout) and ask their own judge
question only when a deterministic pre-check cannot decide, so they cannot be a `compute(ctx)` over shared call
outputs. The registry awaits `run` for them, adds the usage it reports to the verdict, and counts
`planned_calls` in a dry run. Everything else (required fields, language, verdict shape) is the registry's, as for
every metric.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from rubriceval.verdict import Usage
from standard_metrics.context import MetricContext, MetricResult, Unscorable
from standard_metrics.options import MetricOptions
from standard_metrics.protocols import Judge
from standard_metrics.spec import MetricSpec

Outcome = tuple[MetricResult | Unscorable, Usage]
Runner = Callable[[MetricContext, Judge | None], Awaitable[Outcome]]


def _awaited_only(ctx: MetricContext) -> MetricResult:
    raise TypeError("this metric is scored by awaiting its run(ctx, judge), not by compute(ctx)")


def _no_calls(ctx: MetricContext) -> int:
    return 0


@dataclass(frozen=True)
class SelfRunMetricSpec(MetricSpec):
    compute: Callable[[MetricContext], MetricResult] = _awaited_only
    run: Runner | None = None
    # Judge calls the sample will cost when every reply is valid (exact: the pre-check runs at planning time).
    planned_calls: Callable[[MetricContext], int] = field(default=_no_calls)
    uses_judge: bool = False

    def needs_judge(self, options: MetricOptions) -> bool:
        return self.uses_judge

    def needs_embedder(self, options: MetricOptions) -> bool:
        return False
