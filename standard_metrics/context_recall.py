"""context_recall = ground-truth statements attributable to the retrieved contexts / all ground-truth statements

Statements come from the shared extraction call (the ground truth's, from a prompt that never shows the answer,
each found in the ground truth: grounding.py); attribution from the contexts call. Dropped statements are listed,
not counted.

Edge cases:
- no contexts or no ground truth → unscored "missing_field".
- the ground truth yields no statements → unscored "no_statements" (nothing to recall).
"""
from __future__ import annotations

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.call_plan import Need
from rubriceval.standard_metrics.context import MetricContext, MetricResult, Unscorable
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.spec import MetricSpec


def needs(options: MetricOptions) -> frozenset[Need]:
    return frozenset({Need.GROUND_TRUTH_STATEMENTS, Need.GROUND_TRUTH_ATTRIBUTION})


def compute(ctx: MetricContext) -> MetricResult:
    dropped, dropped_details = ctx.dropped_evidence("ground_truth_statements")
    if not ctx.ground_truth_statements():
        raise Unscorable("no_statements", ctx.text("标准答案中没有抽取到任何事实陈述",
                                                   "no statement could be extracted from the ground truth")
                         + ctx.dropped_note("ground_truth_statements"), details=dropped_details)
    verdicts = ctx.ground_truth_attribution()
    found = [v for v in verdicts if v.verdict]
    missing = [v.statement for v in verdicts if not v.verdict]
    feedback = ctx.text(f"{len(found)}/{len(verdicts)} 条标准答案陈述能在参考资料中找到依据",
                        f"{len(found)}/{len(verdicts)} ground-truth statements are found in the contexts")
    if missing:
        feedback += ctx.text("；资料缺少：", "; missing: ") + " | ".join(missing)
    return MetricResult(
        score=len(found) / len(verdicts), feedback=feedback,
        evidence=[Evidence(item=f"{v.id} {v.statement}", passed=v.verdict, detail=v.reason) for v in verdicts]
        + dropped,
        details={"statements": [v.statement for v in verdicts], "attributed": [v.verdict for v in verdicts],
                 "reasons": [v.reason for v in verdicts], **dropped_details})


SPEC = MetricSpec(
    name="context_recall", family="llm",
    summary="share of ground-truth statements that the retrieved contexts support",
    required_fields=("contexts", "ground_truth"), compute=compute, needs=needs)
