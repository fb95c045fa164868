"""faithfulness = answer statements supported by the retrieved contexts / all answer statements

Statements come from the shared extraction call (the answer's, from a prompt showing the answer alone, each found
in the answer: grounding.py); support verdicts from the contexts call. Dropped statements are listed, not counted.

Edge cases:
- no contexts or empty answer → unscored "missing_field" (checked before any call).
- the answer yields no statements → unscored "no_statements" (Ragas returns NaN): a refusal or greeting
  claims nothing, so it is neither faithful nor unfaithful.
"""
from __future__ import annotations

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.call_plan import Need
from rubriceval.standard_metrics.context import MetricContext, MetricResult, Unscorable
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.spec import MetricSpec


def needs(options: MetricOptions) -> frozenset[Need]:
    return frozenset({Need.ANSWER_STATEMENTS, Need.ANSWER_SUPPORT})


def compute(ctx: MetricContext) -> MetricResult:
    dropped, dropped_details = ctx.dropped_evidence("answer_statements")
    if not ctx.answer_statements():
        raise Unscorable("no_statements", ctx.text("回答中没有可核查的事实陈述", "the answer makes no checkable statement")
                         + ctx.dropped_note("answer_statements"), details=dropped_details)
    verdicts = ctx.answer_support()
    supported = [v for v in verdicts if v.verdict]
    score = len(supported) / len(verdicts)
    unsupported = [v.statement for v in verdicts if not v.verdict]
    feedback = ctx.text(f"{len(supported)}/{len(verdicts)} 条回答陈述可由参考资料推出",
                        f"{len(supported)}/{len(verdicts)} answer statements are supported by the contexts")
    if unsupported:
        feedback += ctx.text("；无依据：", "; unsupported: ") + " | ".join(unsupported)
    return MetricResult(
        score=score, feedback=feedback,
        evidence=[Evidence(item=f"{v.id} {v.statement}", passed=v.verdict, detail=v.reason) for v in verdicts]
        + dropped,
        details={"statements": [v.statement for v in verdicts], "supported": [v.verdict for v in verdicts],
                 "reasons": [v.reason for v in verdicts], **dropped_details,
                 **({"added_statements": added} if (added := ctx.added_statements("answer_statements")) else {})})


SPEC = MetricSpec(
    name="faithfulness", family="llm",
    summary="share of answer statements that can be inferred from the retrieved contexts",
    required_fields=("answer", "contexts"), compute=compute, needs=needs)
