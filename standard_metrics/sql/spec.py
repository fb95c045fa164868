"""The declaration of a metric that does its own per-sample work instead of sharing `calls.py`'s judge calls.

The NL2SQL metrics run SQL against a database (in a worker thread, with a timeout) and ask their own judge
question only when a deterministic pre-check cannot decide, so they cannot be a `compute(ctx)` over shared call
outputs. The registry awaits `run` for them, adds the usage it reports to the verdict, takes the verdict's
`scorer_version(ctx)`, and lists `planned_request` in a dry run. Everything else (required fields, language, verdict
shape) is the registry's, as for every metric.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from rubriceval.core.verdict import Usage
from rubriceval.judge.ask import JudgeRequest
from rubriceval.standard_metrics.context import MetricContext, MetricResult, Unscorable
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.protocols import Judge
from rubriceval.standard_metrics.spec import MetricSpec

Outcome = tuple[MetricResult | Unscorable, Usage]
Runner = Callable[[MetricContext, Judge | None], Awaitable[Outcome]]


def _awaited_only(ctx: MetricContext) -> MetricResult:
    raise TypeError("this metric is scored by awaiting its run(ctx, judge), not by compute(ctx)")


def _no_request(ctx: MetricContext) -> JudgeRequest | None:
    return None


@dataclass(frozen=True)
class SelfRunMetricSpec(MetricSpec):
    compute: Callable[[MetricContext], MetricResult] = _awaited_only
    run: Runner | None = None
    # The judge request the sample will cost when every reply is valid, or None (exact: a pre-check runs here too).
    planned_request: Callable[[MetricContext], JudgeRequest | None] = field(default=_no_request)
    # The scorer_version of a verdict: a judged metric includes the fingerprint of the templates it renders.
    version_of: Callable[[MetricContext], str] | None = None
    uses_judge: bool = False

    def scorer_version(self, ctx: MetricContext) -> str:
        return self.version_of(ctx) if self.version_of else self.version

    def needs_judge(self, options: MetricOptions) -> bool:
        return self.uses_judge

    def needs_embedder(self, options: MetricOptions) -> bool:
        return False
