"""A metric's declaration: what it reads from the sample, which shared outputs it needs, how it computes."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from rubriceval.standard_metrics.call_plan import CALL_OF_NEED, EMBEDDING, Need
from rubriceval.standard_metrics.context import MetricContext, MetricResult
from rubriceval.standard_metrics.options import MetricOptions

Family = Literal["llm", "string", "retrieval", "sql"]


def no_needs(options: MetricOptions) -> frozenset[Need]:
    return frozenset()


@dataclass(frozen=True)
class MetricSpec:
    name: str
    family: Family
    summary: str
    required_fields: tuple[str, ...]          # empty (or blank) → unscored "missing_field", no call made
    compute: Callable[[MetricContext], MetricResult]
    needs: Callable[[MetricOptions], frozenset[Need]] = field(default=no_needs)
    version: str = "1"

    def needs_judge(self, options: MetricOptions) -> bool:
        return any(CALL_OF_NEED[n] != EMBEDDING for n in self.needs(options))

    def needs_embedder(self, options: MetricOptions) -> bool:
        return any(CALL_OF_NEED[n] == EMBEDDING for n in self.needs(options))
