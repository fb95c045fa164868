"""A metric's pass threshold: a verdict's `passed`, the reports' pass rates and the gates all read it from here.

Set per run (`evaluate(thresholds={"faithfulness": 0.8})`, config `metrics: {faithfulness: {threshold: 0.8}}`,
`rubriceval run --threshold faithfulness=0.8`); the run stores it in the metric's definition. The defaults are
common starting points for RAG systems, not truths."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_METRIC_THRESHOLDS: dict[str, float] = {
    "faithfulness": 0.8,
    "answer_correctness": 0.7,
    "answer_relevancy": 0.7,
    "context_precision": 0.7,
    "context_recall": 0.7,
}
FALLBACK_METRIC_THRESHOLD = 0.5   # any other 0–1 metric: "more right than wrong"


def metric_threshold(metric: str, definition: Mapping[str, Any],
                     overrides: Mapping[str, float] | None) -> tuple[float, str]:
    """A metric's pass threshold and where it came from: caller config > stored definition > defaults."""
    if overrides and metric in overrides:
        return float(overrides[metric]), "config"
    if definition.get("threshold") is not None:
        return float(definition["threshold"]), "definition"
    return DEFAULT_METRIC_THRESHOLDS.get(metric, FALLBACK_METRIC_THRESHOLD), "default"
