"""Non-LLM context precision and recall: retrieved vs reference contexts by normalized edit-distance similarity.

    similarity(r, g) = 1 − Levenshtein(r, g) / max(len r, len g)      (故宫在北京 vs 故宫位于北京: 1 − 2/6)
    precision = average_precision([max_g sim(r_i, g) ≥ threshold for each retrieved r_i, in rank order])
    recall    = |{g : max_i sim(r_i, g) > threshold}| / |reference contexts|

The threshold (default 0.5) is inclusive for precision and exclusive for recall, exactly as Ragas 0.2.15 does
(fixture ctx_threshold_exact_half: similarity 0.5 → precision 1, recall 0); we keep that for conformance.

Edge cases (Ragas → ours):
- empty reference list: Ragas raises (precision) / returns NaN (recall) → both unscored, "missing_field".
- empty retrieved list: Ragas returns 0.0 (precision) / raises (recall) → both unscored, "missing_field": an
  empty list cannot be told apart from a dataset without retrieved contexts (same rule as the LLM metrics).
- empty strings inside the lists are compared like any other text (sim("", "") = 1, sim("", x) = 0), as Ragas.
"""
from __future__ import annotations

from pydantic import BaseModel

from standard_metrics.context import MetricContext, MetricResult
from standard_metrics.formulas import average_precision
from standard_metrics.spec import MetricSpec
from standard_metrics.string_metrics import SimilarityMeasure, string_similarity

DEFAULT_THRESHOLD = 0.5


class NonLLMContextResult(BaseModel):
    score: float
    verdicts: list[int]                   # per retrieved context (precision) or per reference context (recall)
    best_similarity: list[float]          # the max similarity behind each verdict
    similarity_matrix: list[list[float]]  # [retrieved i][reference j]


def similarity_matrix(retrieved: list[str], reference: list[str],
                      measure: SimilarityMeasure = "levenshtein") -> list[list[float]]:
    return [[string_similarity(ref, ret, measure) for ref in reference] for ret in retrieved]


def _require_both(retrieved: list[str], reference: list[str]) -> None:
    if not retrieved:
        raise ValueError("no retrieved contexts")
    if not reference:
        raise ValueError("no reference contexts")


def nonllm_context_precision(retrieved: list[str], reference: list[str], threshold: float = DEFAULT_THRESHOLD,
                             measure: SimilarityMeasure = "levenshtein") -> NonLLMContextResult:
    """Average precision of the ranking, a retrieved context counting as relevant when its best similarity to
    any reference context is ≥ threshold. Raises ValueError when either list is empty."""
    _require_both(retrieved, reference)
    matrix = similarity_matrix(retrieved, reference, measure)
    best = [max(row) for row in matrix]
    verdicts = [int(s >= threshold) for s in best]
    return NonLLMContextResult(score=average_precision(verdicts), verdicts=verdicts, best_similarity=best,
                               similarity_matrix=matrix)


def nonllm_context_recall(retrieved: list[str], reference: list[str], threshold: float = DEFAULT_THRESHOLD,
                          measure: SimilarityMeasure = "levenshtein") -> NonLLMContextResult:
    """Share of reference contexts whose best similarity to any retrieved context is > threshold.
    Raises ValueError when either list is empty."""
    _require_both(retrieved, reference)
    matrix = similarity_matrix(retrieved, reference, measure)
    best = [max(matrix[i][j] for i in range(len(retrieved))) for j in range(len(reference))]
    verdicts = [int(s > threshold) for s in best]
    return NonLLMContextResult(score=sum(verdicts) / len(verdicts), verdicts=verdicts, best_similarity=best,
                               similarity_matrix=matrix)


# Sample-level metrics -------------------------------------------------------------------------------------------

def _verdict(result: NonLLMContextResult, what: str) -> MetricResult:
    hits = sum(result.verdicts)
    return MetricResult(score=result.score, feedback=f"{hits}/{len(result.verdicts)} {what}",
                        details=result.model_dump())


def compute_precision(ctx: MetricContext) -> MetricResult:
    o = ctx.options
    result = nonllm_context_precision(ctx.sample.contexts, ctx.sample.reference_contexts, o.nonllm_threshold,
                                      o.nonllm_measure)
    return _verdict(result, ctx.text(f"条检索资料与某条标准资料相似度 ≥ {o.nonllm_threshold:g}",
                                          f"retrieved contexts reach similarity ≥ {o.nonllm_threshold:g}"))


def compute_recall(ctx: MetricContext) -> MetricResult:
    o = ctx.options
    result = nonllm_context_recall(ctx.sample.contexts, ctx.sample.reference_contexts, o.nonllm_threshold,
                                   o.nonllm_measure)
    return _verdict(result, ctx.text(f"条标准资料被检索到（相似度 > {o.nonllm_threshold:g}）",
                                          f"reference contexts retrieved (similarity > {o.nonllm_threshold:g})"))


PRECISION_SPEC = MetricSpec(
    name="nonllm_context_precision", family="retrieval", required_fields=("contexts", "reference_contexts"),
    compute=compute_precision,
    summary="average precision of retrieved contexts matching a reference context (edit similarity ≥ 0.5)")

RECALL_SPEC = MetricSpec(
    name="nonllm_context_recall", family="retrieval", required_fields=("contexts", "reference_contexts"),
    compute=compute_recall,
    summary="share of reference contexts matched by a retrieved context (edit similarity > 0.5)")
