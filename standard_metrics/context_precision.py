"""context_precision = average precision of the ranked contexts' relevance verdicts

    AP = Σ_k precision@k · rel_k / Σ_k rel_k        [1, 1, 0, 1, 0] → (1 + 1 + 3/4) / 3 = 11/12

- context_precision (with reference): rel_k = context k helps arrive at the ground truth.
- context_utilization (without reference): rel_k = the answer used context k — for production traffic,
  where no ground truth exists.
All contexts are judged in the one call per sample that reads them all.

Edge cases:
- no contexts, or (with reference) no ground truth → unscored "missing_field". A retriever that returned
  nothing cannot be told apart from a dataset without contexts; such samples are counted as unscored.
- no context is relevant → 0.0 (every retrieved context was noise; Ragas gives the same 0).
"""
from __future__ import annotations

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.call_plan import Need
from rubriceval.standard_metrics.context import MetricContext, MetricResult
from rubriceval.standard_metrics.formulas import average_precision
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.spec import MetricSpec


def _precision(ctx: MetricContext, flag: str, zh_word: str, en_word: str) -> MetricResult:
    verdicts = ctx.context_verdicts()
    relevance = [int(bool(getattr(v, flag))) for v in verdicts]
    score = average_precision(relevance)
    hits, precisions = 0, []
    for rank, rel in enumerate(relevance, start=1):
        hits += rel
        precisions.append(hits / rank)
    ranks = [str(i) for i, rel in enumerate(relevance, start=1) if rel]
    feedback = ctx.text(
        f"{len(ranks)}/{len(relevance)} 条资料{zh_word}（排名 {', '.join(ranks) or '无'}），AP {score:.3f}",
        f"{len(ranks)}/{len(relevance)} contexts {en_word} (ranks {', '.join(ranks) or 'none'}), AP {score:.3f}")
    return MetricResult(
        score=score, feedback=feedback,
        evidence=[Evidence(item=f"{v.id} {v.context[:80]}", passed=bool(rel), detail=v.reason)
                  for v, rel in zip(verdicts, relevance)],
        details={"verdicts": relevance, "precision_at_k": precisions, "reasons": [v.reason for v in verdicts]})


def compute_with_reference(ctx: MetricContext) -> MetricResult:
    return _precision(ctx, "relevant", "与标准答案相关", "relevant to the ground truth")


def compute_utilization(ctx: MetricContext) -> MetricResult:
    return _precision(ctx, "used", "被回答用到", "used by the answer")


def needs_with_reference(options: MetricOptions) -> frozenset[Need]:
    return frozenset({Need.CONTEXT_RELEVANCE})


def needs_utilization(options: MetricOptions) -> frozenset[Need]:
    return frozenset({Need.CONTEXT_USE})


SPEC = MetricSpec(
    name="context_precision", family="llm",
    summary="average precision of per-context relevance to the ground truth, in retrieval order",
    required_fields=("contexts", "ground_truth"), compute=compute_with_reference, needs=needs_with_reference)

UTILIZATION_SPEC = MetricSpec(
    name="context_utilization", family="llm",
    summary="average precision of per-context use by the answer (context precision without a reference)",
    required_fields=("contexts", "answer"), compute=compute_utilization, needs=needs_utilization)
