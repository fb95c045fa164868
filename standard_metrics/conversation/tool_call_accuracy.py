"""tool_call_accuracy = [names in the reference's order] × Σ argument match of same-position calls / |reference|

Ragas's ToolCallAccuracy (0.4.3): the assistant's tool calls, in conversation order, are paired position by
position with the reference calls. If the sequence of tool NAMES differs from the reference's, the score is 0.
Otherwise each pair scores the mean match of the reference's arguments (`tool_calls.argument_score`: extra
arguments cost nothing, a missing one scores 0), and the score is their sum over the number of reference calls.
`strict_order=False` sorts both lists first (by name, then argument names and values), so order is free.

The argument comparison is exact by default (str(pred) == str(ref), as Ragas); `argument_match` chooses
case_insensitive, numeric (with `numeric_tolerance`) or any callable(pred_value, ref_value) → 0–1.

Edge cases (Ragas → ours):
- no reference_tool_calls → unscored "missing_field" (Ragas: 1.0 when the assistant made no call either, 0.0
  otherwise): an empty list cannot be told apart from a dataset without the column.
- the assistant made no call → 0.0 (as Ragas).
"""
from __future__ import annotations

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.agent_options import AgentOptions
from rubriceval.standard_metrics.context import MetricResult
from rubriceval.standard_metrics.conversation.spec import ConversationContext, ConversationMetricSpec
from rubriceval.standard_metrics.conversation.tool_calls import MadeCall, argument_score, made_calls, order_key


async def compute(ctx: ConversationContext) -> MetricResult:
    reference = list(ctx.conversation.reference_tool_calls)
    made = made_calls(ctx.conversation)
    if not ctx.agent.strict_order:
        reference = sorted(reference, key=order_key)
        made = sorted(made, key=lambda m: order_key(m.call))
    expected_names = [c.name for c in reference]
    made_names = [m.call.name for m in made]
    aligned = (made_names == expected_names if ctx.agent.strict_order
               else sorted(made_names) == sorted(expected_names))

    evidence: list[Evidence] = []
    pair_scores: list[float] = []
    for position, ref in enumerate(reference, start=1):
        pair: MadeCall | None = made[position - 1] if position <= len(made) else None
        if pair is None:
            evidence.append(Evidence(item=f"#{position} {ref.signature()}", passed=False, score=0.0,
                                     missing=[ref.signature()],
                                     detail=ctx.text("没有对应位置的工具调用", "no call at this position")))
            pair_scores.append(0.0)
            continue
        if pair.call.name != ref.name:
            score = 0.0
            detail = ctx.text(f"第 {pair.turn} 轮调用了 {pair.call.signature()}（工具名不同）",
                              f"turn {pair.turn} called {pair.call.signature()} (a different tool)")
        else:
            args = argument_score(pair.call.arguments, ref.arguments, ctx.agent)
            score = args.score
            detail = ctx.text(f"第 {pair.turn} 轮：{pair.call.signature()}；参数匹配 {args.score:.2f}",
                              f"turn {pair.turn}: {pair.call.signature()}; arguments match {args.score:.2f}")
            if args.missing:
                detail += ctx.text("；缺少参数 ", "; missing arguments ") + ", ".join(args.missing)
        pair_scores.append(score)
        evidence.append(Evidence(item=f"#{position} {ref.signature()}", passed=score == 1.0, score=score,
                                 detail=detail, span=pair.call.signature()))

    # Ragas: sum over paired positions / |reference|, × coverage (compared/|reference|) when fewer calls were
    # made — but a shorter list never has aligned names, so the coverage factor cannot change a non-zero score.
    argument_accuracy = sum(pair_scores) / len(reference)
    score = argument_accuracy if aligned else 0.0
    if not made:
        feedback = ctx.text(f"助手没有调用任何工具（参考有 {len(reference)} 次调用）",
                            f"the assistant made no tool call ({len(reference)} expected)")
    elif not aligned:
        feedback = ctx.text(f"工具调用顺序/名称与参考不一致：参考 {expected_names}，实际 {made_names}",
                            f"tool names or order differ: expected {expected_names}, made {made_names}")
    else:
        feedback = ctx.text(f"{len(reference)} 次调用的工具与顺序一致，参数平均匹配 {argument_accuracy:.2f}",
                            f"all {len(reference)} tools called in order; mean argument match {argument_accuracy:.2f}")
    return MetricResult(score=score, feedback=feedback, evidence=evidence, details={
        "sequence_aligned": aligned, "argument_accuracy": argument_accuracy, "pair_scores": pair_scores,
        "expected": [c.signature() for c in reference],
        "made": [{"turn": m.turn, "call": m.call.signature()} for m in made],
        "strict_order": ctx.agent.strict_order, "argument_match": ctx.agent.argument_match_label()})


def _label(agent: AgentOptions) -> str:
    return f"args.{agent.argument_match_label()}" + ("" if agent.strict_order else "+any_order")


SPEC = ConversationMetricSpec(
    name="tool_call_accuracy", family="tool",
    summary="tool calls in the reference's order (else 0) × mean argument match per call (Ragas ToolCallAccuracy)",
    required_fields=("reference_tool_calls",), compute=compute, option_label=_label)
