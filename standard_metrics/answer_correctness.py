"""answer_correctness = (w_sem · similarity + w_fact · F_β) / (w_sem + w_fact),  defaults w_sem 0.25, w_fact 0.75

    similarity = cos(embed(answer), embed(ground_truth))
    F_β        = (1+β²)·TP / ((1+β²)·TP + β²·FN + FP);   β = 1:  F1 = TP / (TP + ½(FP + FN))
    TP = answer statements the ground truth supports, FP = answer statements it does not,
    FN = ground-truth statements the answer does not cover.

Statements come from the shared extraction call; TP/FP/FN from one classification call.

Edge cases:
- ground truth yields no statements → unscored "no_statements" (nothing to be correct about).
- answer yields no statements (e.g. a pure refusal) → every ground-truth statement is FN, F = 0; the
  classification call is skipped.
- factual_weight = 0 → no judge call (pure similarity); semantic_weight = 0 → no embedding.
- similarity is the raw cosine, not clamped (as Ragas); an all-zero vector → unscored.
"""
from __future__ import annotations

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.call_plan import Need
from rubriceval.standard_metrics.context import MetricContext, MetricResult, StatementVerdict, Unscorable
from rubriceval.standard_metrics.formulas import cosine_similarity, fbeta, weighted_average
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.spec import MetricSpec


def needs(options: MetricOptions) -> frozenset[Need]:
    wanted: set[Need] = set()
    if options.factual_weight > 0:
        wanted |= {Need.ANSWER_STATEMENTS, Need.GROUND_TRUTH_STATEMENTS, Need.CLASSIFICATION}
    if options.semantic_weight > 0:
        wanted.add(Need.EMBED_ANSWER_AND_GROUND_TRUTH)
    return frozenset(wanted)


def _classify(ctx: MetricContext) -> tuple[list[StatementVerdict], list[StatementVerdict]]:
    """(answer statements with in-ground-truth verdicts, ground-truth statements with in-answer verdicts)."""
    ground_truth = ctx.ground_truth_statements()
    if not ground_truth:
        raise Unscorable("no_statements", ctx.text("标准答案中没有抽取到任何事实陈述，无法判断回答是否正确",
                                                   "no statement could be extracted from the ground truth")
                         + ctx.dropped_note("ground_truth_statements"),
                         details=ctx.dropped_evidence("ground_truth_statements")[1])
    if not ctx.answer_statements():
        missing = ctx.text("回答中没有事实陈述", "the answer states nothing")
        return [], [StatementVerdict(id=f"g{i}", statement=s, verdict=False, reason=missing)
                    for i, s in enumerate(ground_truth, start=1)]
    return ctx.answer_in_ground_truth(), ctx.ground_truth_in_answer()


def compute(ctx: MetricContext) -> MetricResult:
    options = ctx.options
    values: list[float] = []
    weights: list[float] = []
    evidence: list[Evidence] = []
    details: dict = {"weights": {"semantic": options.semantic_weight, "factual": options.factual_weight}}
    explained: list[str] = []

    if options.factual_weight > 0:
        answer_verdicts, truth_verdicts = _classify(ctx)
        tp = [v for v in answer_verdicts if v.verdict]
        fp = [v for v in answer_verdicts if not v.verdict]
        fn = [v for v in truth_verdicts if not v.verdict]
        factual = fbeta(len(tp), len(fp), len(fn), options.factual_beta)
        values.append(factual)
        weights.append(options.factual_weight)
        for label, group in (("TP", tp), ("FP", fp), ("FN", fn)):
            evidence += [Evidence(item=f"{v.id} {v.statement}", passed=label == "TP", detail=f"{label}: {v.reason}")
                         for v in group]
        for which in ("answer_statements", "ground_truth_statements"):
            dropped, dropped_details = ctx.dropped_evidence(which)
            evidence += dropped
            if dropped_details:
                details.setdefault("dropped_statements", {})[which] = dropped_details["dropped_statements"]
        details.update(
            answer_statements=[v.statement for v in answer_verdicts] or ctx.answer_statements(),
            ground_truth_statements=[v.statement for v in truth_verdicts],
            classes={"TP": [v.statement for v in tp], "FP": [v.statement for v in fp],
                     "FN": [v.statement for v in fn]},
            tp=len(tp), fp=len(fp), fn=len(fn), beta=options.factual_beta, factual_score=factual)
        counts = f"F{options.factual_beta:g} {factual:.3f} (TP {len(tp)}, FP {len(fp)}, FN {len(fn)})"
        explained.append(ctx.text("事实准确度 ", "factual ") + counts)

    if options.semantic_weight > 0:
        similarity = cosine_similarity(ctx.vector(ctx.sample.answer), ctx.vector(ctx.sample.ground_truth))
        if similarity is None:
            raise Unscorable("error", "the embedder returned an all-zero vector; similarity is undefined",
                             details=details)
        values.append(similarity)
        weights.append(options.semantic_weight)
        details["semantic_similarity"] = similarity
        explained.append(ctx.text(f"语义相似度 {similarity:.3f}", f"similarity {similarity:.3f}"))

    score = weighted_average(values, weights)
    weighting = f"({options.semantic_weight:g}·sim + {options.factual_weight:g}·F) / {sum(weights):g}"
    feedback = "; ".join(explained) + f"; {weighting} → {score:.3f}"
    return MetricResult(score=score, feedback=feedback, evidence=evidence, details=details)


SPEC = MetricSpec(
    name="answer_correctness", family="llm",
    summary="0.25·semantic similarity + 0.75·statement F1 of answer vs ground truth (TP/FP/FN by the judge)",
    required_fields=("answer", "ground_truth"), compute=compute, needs=needs)
