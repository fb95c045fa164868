"""The single-turn metrics that exist, one spec per metric module (conversation metrics: conversation/catalog.py)."""
from __future__ import annotations

from rubriceval.standard_metrics import (
                              answer_correctness,
                              answer_relevancy,
                              context_precision,
                              context_recall,
                              datacompy_score,
                              faithfulness,
                              naive_testers,
                              nonllm_context,
                              sql_equivalence,
                              string_verdicts,
)
from rubriceval.standard_metrics.spec import MetricSpec

METRICS: dict[str, MetricSpec] = {spec.name: spec for spec in [
    answer_correctness.SPEC,
    faithfulness.SPEC,
    answer_relevancy.SPEC,
    context_precision.SPEC,
    context_precision.UTILIZATION_SPEC,
    context_recall.SPEC,
    naive_testers.VALIDITY_SPEC,
    naive_testers.USEFULNESS_SPEC,
    nonllm_context.PRECISION_SPEC,
    nonllm_context.RECALL_SPEC,
    *string_verdicts.SPECS,
    datacompy_score.SPEC,       # NL2SQL: these two run their own SQL / judge question (SelfRunMetricSpec)
    sql_equivalence.SPEC,
]}


# The classic Ragas five, for "--metrics ragas"-style shortcuts.
RAGAS_FIVE = ["answer_correctness", "faithfulness", "answer_relevancy", "context_precision", "context_recall"]
