"""answer_relevancy = mean_i cos(embed(q_i), embed(question)),  or 0 when the answer is noncommittal

The judge writes N questions (default 3) back from the answer alone — in its own call, because a judge that
has seen the original question would simply copy it — and flags noncommittal answers ("根据提供的信息，没有
提到…"). All vectors come from one embedding request per sample.

Edge cases:
- empty question or answer → unscored "missing_field".
- noncommittal → 0.0, even if the embedding failed (the cosine is not needed then).
- the raw mean cosine is reported, not clamped (in theory [-1, 1]; in practice [0, 1] for text embedders);
  an all-zero vector → unscored.
"""
from __future__ import annotations

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.call_plan import Need
from rubriceval.standard_metrics.context import MetricContext, MetricResult, Unscorable
from rubriceval.standard_metrics.formulas import cosine_similarity
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.spec import MetricSpec


def needs(options: MetricOptions) -> frozenset[Need]:
    return frozenset({Need.REVERSE_QUESTIONS, Need.EMBED_QUESTIONS})


def compute(ctx: MetricContext) -> MetricResult:
    generated = ctx.reverse_questions()
    details: dict = {"generated_questions": generated.questions, "noncommittal": generated.noncommittal}
    if generated.noncommittal:
        return MetricResult(
            score=0.0, details=details,
            feedback=ctx.text("评测模型判定回答含糊回避（没有给出实质信息），得 0 分",
                              "the judge flagged the answer as noncommittal (no substantive information): 0"))
    original = ctx.vector(ctx.sample.question)
    similarities: list[float] = []
    for question in generated.questions:
        similarity = cosine_similarity(ctx.vector(question), original)
        if similarity is None:
            raise Unscorable("error", "the embedder returned an all-zero vector; similarity is undefined",
                             details=details)
        similarities.append(similarity)
    score = sum(similarities) / len(similarities)
    details["similarities"] = similarities
    return MetricResult(
        score=score, details=details,
        feedback=ctx.text(f"由回答反推的 {len(similarities)} 个问题与原问题的平均余弦相似度 {score:.3f}",
                          f"mean cosine of {len(similarities)} questions written back from the answer: {score:.3f}"),
        evidence=[Evidence(item=q, score=s) for q, s in zip(generated.questions, similarities)])


SPEC = MetricSpec(
    name="answer_relevancy", family="llm",
    summary="mean cosine between questions generated back from the answer and the real question",
    required_fields=("question", "answer"), compute=compute, needs=needs)
