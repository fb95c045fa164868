"""The seeds' naive LLM testers, with structured output: score 1 or 0.

- answer_validity: does the answer validly answer the question? (有效回答 → 1 / 无效回答 → 0)
- context_usefulness: can the retrieved contexts help answer the question? (参考信息有用 → 1 / 参考信息无用 → 0)

They are coarse on purpose (the seeds show why: a fluent hallucination is a "valid" answer); use them as a
cheap first screen next to answer_correctness / faithfulness / context_precision.
Edge cases: empty question/answer/contexts → unscored "missing_field".
"""
from __future__ import annotations

from rubriceval.standard_metrics.call_plan import Need
from rubriceval.standard_metrics.context import MetricContext, MetricResult
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.spec import MetricSpec


def compute_validity(ctx: MetricContext) -> MetricResult:
    verdict = ctx.answer_validity()
    return MetricResult(score=1.0 if verdict.positive else 0.0, feedback=f"{verdict.label}: {verdict.reason}",
                        details={"label": verdict.label, "reason": verdict.reason})


def compute_usefulness(ctx: MetricContext) -> MetricResult:
    verdict = ctx.context_usefulness()
    return MetricResult(score=1.0 if verdict.positive else 0.0, feedback=f"{verdict.label}: {verdict.reason}",
                        details={"label": verdict.label, "reason": verdict.reason})


def needs_validity(options: MetricOptions) -> frozenset[Need]:
    return frozenset({Need.ANSWER_VALIDITY})


def needs_usefulness(options: MetricOptions) -> frozenset[Need]:
    return frozenset({Need.CONTEXT_USEFULNESS})


VALIDITY_SPEC = MetricSpec(
    name="answer_validity", family="llm", summary="有效回答/无效回答: does the answer answer the question (1/0)",
    required_fields=("question", "answer"), compute=compute_validity, needs=needs_validity)

USEFULNESS_SPEC = MetricSpec(
    name="context_usefulness", family="llm",
    summary="参考信息有用/无用: can the retrieved contexts help answer the question (1/0)",
    required_fields=("question", "contexts"), compute=compute_usefulness, needs=needs_usefulness)
