"""tool_call_f1 = F1 of the SET of (name, arguments) the assistant called vs the set the reference lists

Ragas's ToolCallF1 (0.4.3): order-free; a call matches only with the same name and exactly equal arguments
(nested values compared as values: {"a": 1} == {"a": 1.0}, "1" ≠ 1). Both sides are sets, so a call repeated
with the same arguments counts once.
    precision = |made ∩ reference| / |made|,  recall = |made ∩ reference| / |reference|,  F1 = 2PR / (P + R)

Edge cases (Ragas → ours):
- no reference_tool_calls → unscored "missing_field" (Ragas: 0.0).
- the assistant made no call → 0.0 (as Ragas).
- Ragas rounds the F1 to 4 decimals; we do not (the exact fraction, e.g. 2/3).
"""
from __future__ import annotations

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.context import MetricResult
from rubriceval.standard_metrics.conversation.spec import ConversationContext, ConversationMetricSpec
from rubriceval.standard_metrics.conversation.tool_calls import call_key, made_calls
from rubriceval.standard_metrics.formulas import fbeta


async def compute(ctx: ConversationContext) -> MetricResult:
    expected = {call_key(c): c for c in ctx.conversation.reference_tool_calls}
    made: dict = {}
    for m in made_calls(ctx.conversation):
        made.setdefault(call_key(m.call), m)
    hits = [k for k in expected if k in made]
    extra = [k for k in made if k not in expected]
    missed = [k for k in expected if k not in made]
    tp, fp, fn = len(hits), len(extra), len(missed)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    evidence = [Evidence(item=expected[k].signature(), passed=True,
                         detail=ctx.text(f"第 {made[k].turn} 轮已调用", f"called in turn {made[k].turn}"))
                for k in hits]
    evidence += [Evidence(item=expected[k].signature(), passed=False, missing=[expected[k].signature()],
                          detail=ctx.text("参考中的调用没有出现", "expected call not made")) for k in missed]
    evidence += [Evidence(item=made[k].call.signature(), passed=False, span=made[k].call.signature(),
                          detail=ctx.text(f"第 {made[k].turn} 轮的调用不在参考中",
                                          f"turn {made[k].turn}: a call the reference does not list"))
                 for k in extra]
    feedback = ctx.text(f"参考调用命中 {tp}/{tp + fn}，实际调用中 {fp} 次不在参考中",
                        f"{tp}/{tp + fn} expected calls made; {fp} made call(s) not expected")
    return MetricResult(score=fbeta(tp, fp, fn), feedback=feedback, evidence=evidence, details={
        "precision": precision, "recall": recall, "tp": tp, "fp": fp, "fn": fn,
        "matched": [expected[k].signature() for k in hits], "missing": [expected[k].signature() for k in missed],
        "unexpected": [made[k].call.signature() for k in extra]})


SPEC = ConversationMetricSpec(
    name="tool_call_f1", family="tool",
    summary="F1 of the set of (tool, arguments) called vs the reference calls, order-free (Ragas ToolCallF1)",
    required_fields=("reference_tool_calls",), compute=compute)
