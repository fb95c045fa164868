"""Non-LLM context precision and recall: retrieved vs reference contexts by normalized edit-distance similarity.

    similarity(r, g) = 1 − Levenshtein(r, g) / max(len r, len g)      (故宫在北京 vs 故宫位于北京: 1 − 2/6)
    precision = average_precision([max_g sim(r_i, g) ≥ threshold for each retrieved r_i, in rank order])
    recall    = |{g : max_i sim(r_i, g) > threshold}| / |reference contexts|

The threshold (default 0.5) is inclusive for precision and exclusive for recall, exactly as Ragas 0.2.15 does
(fixture ctx_threshold_exact_half: similarity 0.5 → precision 1, recall 0); we keep that for conformance.

Structured rows (a table row per chunk, e.g. "工号：E1023｜姓名：张伟｜部门：教研部｜…"): two rows of one table
share their layout, so edit similarity calls any two of them the same chunk (the wrong 张伟 scored 1.0). Rule: a text
is a row when at least 3 of its cells (split on ｜ | ; ； tab or newline) read `field：value` (or `field: value`,
`field=value`). A retrieved row and a reference row match only when their key fields are equal (values compared
NFKC-normalised, case-folded, spaces removed); then their similarity is the edit similarity as usual, otherwise 0.
Key fields: `MetricOptions.nonllm_key_fields` (e.g. ["工号"]), else the reference row's first field (the table's
identifier column by convention); a key field missing from either row → no match. A row against a text that is not
a row is compared by edit similarity, as before. `details.row_pairs` counts the pairs the rule decided.

Edge cases (Ragas → ours):
- empty reference list: Ragas raises (precision) / returns NaN (recall) → both unscored, "missing_field".
- empty retrieved list: Ragas returns 0.0 (precision) / raises (recall) → both unscored, "missing_field": an
  empty list cannot be told apart from a dataset without retrieved contexts (same rule as the LLM metrics).
- empty strings inside the lists are compared like any other text (sim("", "") = 1, sim("", x) = 0), as Ragas.
"""
from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel

from rubriceval.standard_metrics.context import MetricContext, MetricResult
from rubriceval.standard_metrics.formulas import average_precision
from rubriceval.standard_metrics.spec import MetricSpec
from rubriceval.standard_metrics.string_metrics import SimilarityMeasure, string_similarity

DEFAULT_THRESHOLD = 0.5
MIN_ROW_FIELDS = 3
_CELL_SPLIT = re.compile(r"[｜|;；\t\n]")
_FIELD = re.compile(r"^\s*([^:：=]{1,30}?)\s*[:：=]\s*(.*?)\s*$")


class NonLLMContextResult(BaseModel):
    score: float
    verdicts: list[int]                   # per retrieved context (precision) or per reference context (recall)
    best_similarity: list[float]          # the max similarity behind each verdict
    similarity_matrix: list[list[float]]  # [retrieved i][reference j]
    row_pairs: int = 0                    # (retrieved, reference) pairs that were both table rows: key-field rule


def table_row(text: str) -> dict[str, str] | None:
    """The fields of a structured row (field → value, in order), or None when the text is not one."""
    fields: dict[str, str] = {}
    for cell in _CELL_SPLIT.split(text):
        if (m := _FIELD.match(cell)) and m.group(2):
            fields.setdefault(_normal(m.group(1)), m.group(2))
    return fields if len(fields) >= MIN_ROW_FIELDS else None


def _normal(value: str) -> str:
    return "".join(unicodedata.normalize("NFKC", value).casefold().split())


def rows_match(retrieved: dict[str, str], reference: dict[str, str], key_fields: list[str] | None) -> bool:
    """Two rows are the same row when every key field is present in both with equal values."""
    keys = [_normal(k) for k in key_fields] if key_fields else [next(iter(reference))]
    return all(k in retrieved and k in reference and _normal(retrieved[k]) == _normal(reference[k]) for k in keys)


def similarity_matrix(retrieved: list[str], reference: list[str], measure: SimilarityMeasure = "levenshtein",
                      key_fields: list[str] | None = None) -> list[list[float]]:
    """[retrieved i][reference j] similarity, with the structured-row rule."""
    rows_ret, rows_ref = [table_row(t) for t in retrieved], [table_row(t) for t in reference]
    return [[(string_similarity(ref, ret, measure) if rows_match(row_ret, row_ref, key_fields) else 0.0)
             if row_ret is not None and row_ref is not None else string_similarity(ref, ret, measure)
             for ref, row_ref in zip(reference, rows_ref)]
            for ret, row_ret in zip(retrieved, rows_ret)]


def row_pairs(retrieved: list[str], reference: list[str]) -> int:
    """How many (retrieved, reference) pairs are both table rows, i.e. were decided by their key fields."""
    return sum(table_row(t) is not None for t in retrieved) * sum(table_row(t) is not None for t in reference)


def _require_both(retrieved: list[str], reference: list[str]) -> None:
    if not retrieved:
        raise ValueError("no retrieved contexts")
    if not reference:
        raise ValueError("no reference contexts")


def nonllm_context_precision(retrieved: list[str], reference: list[str], threshold: float = DEFAULT_THRESHOLD,
                             measure: SimilarityMeasure = "levenshtein",
                             key_fields: list[str] | None = None) -> NonLLMContextResult:
    """Average precision of the ranking, a retrieved context counting as relevant when its best similarity to
    any reference context is ≥ threshold. Raises ValueError when either list is empty."""
    _require_both(retrieved, reference)
    matrix = similarity_matrix(retrieved, reference, measure, key_fields)
    best = [max(row) for row in matrix]
    verdicts = [int(s >= threshold) for s in best]
    return NonLLMContextResult(score=average_precision(verdicts), verdicts=verdicts, best_similarity=best,
                               similarity_matrix=matrix, row_pairs=row_pairs(retrieved, reference))


def nonllm_context_recall(retrieved: list[str], reference: list[str], threshold: float = DEFAULT_THRESHOLD,
                          measure: SimilarityMeasure = "levenshtein",
                          key_fields: list[str] | None = None) -> NonLLMContextResult:
    """Share of reference contexts whose best similarity to any retrieved context is > threshold.
    Raises ValueError when either list is empty."""
    _require_both(retrieved, reference)
    matrix = similarity_matrix(retrieved, reference, measure, key_fields)
    best = [max(matrix[i][j] for i in range(len(retrieved))) for j in range(len(reference))]
    verdicts = [int(s > threshold) for s in best]
    return NonLLMContextResult(score=sum(verdicts) / len(verdicts), verdicts=verdicts, best_similarity=best,
                               similarity_matrix=matrix, row_pairs=row_pairs(retrieved, reference))


# Sample-level metrics -------------------------------------------------------------------------------------------

def _verdict(result: NonLLMContextResult, what: str) -> MetricResult:
    hits = sum(result.verdicts)
    return MetricResult(score=result.score, feedback=f"{hits}/{len(result.verdicts)} {what}",
                        details=result.model_dump())


def compute_precision(ctx: MetricContext) -> MetricResult:
    o = ctx.options
    result = nonllm_context_precision(ctx.sample.contexts, ctx.sample.reference_contexts, o.nonllm_threshold,
                                      o.nonllm_measure, o.nonllm_key_fields)
    return _verdict(result, ctx.text(f"条检索资料与某条标准资料相似度 ≥ {o.nonllm_threshold:g}",
                                          f"retrieved contexts reach similarity ≥ {o.nonllm_threshold:g}"))


def compute_recall(ctx: MetricContext) -> MetricResult:
    o = ctx.options
    result = nonllm_context_recall(ctx.sample.contexts, ctx.sample.reference_contexts, o.nonllm_threshold,
                                   o.nonllm_measure, o.nonllm_key_fields)
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
