"""agent_goal_accuracy = 1 if the outcome the conversation reached is the desired one, else 0

Ragas's AgentGoalAccuracyWithReference / WithoutReference (0.4.3), binary:
- with reference (`agent_goal_accuracy`): the judge states the end state the conversation reached and compares
  it with the conversation's `reference_outcome` → 1 / 0.
- without reference (`agent_goal_accuracy_without_reference`): the judge infers the user's goal and the end
  state, and whether the end state achieves the goal → 1 / 0.

One judge call each where Ragas makes two (infer the workflow, then compare outcomes); the structured answer
keeps Ragas's order — end state (and goal) first, then the reason, then the verdict — so the judge describes what
happened before it decides. Unlike Ragas's second call, the comparison sees the transcript, not only the end
state the first call wrote.

Edge cases: no reference_outcome → `agent_goal_accuracy` unscored "missing_field" (Ragas raises); the judge's
answer breaking the schema after one re-ask → unscored "invalid_output".
"""
from __future__ import annotations

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.calls import CacheLookup, PlannedCall
from rubriceval.standard_metrics.context import MetricResult
from rubriceval.standard_metrics.conversation.judging import ask_judge, planned
from rubriceval.standard_metrics.conversation.spec import ConversationContext, ConversationMetricSpec
from rubriceval.standard_metrics.schemas import BOOLEAN, STRING, obj

WITH_REFERENCE = obj({"end_state": STRING, "reason": STRING, "achieved": BOOLEAN})
WITHOUT_REFERENCE = obj({"user_goal": STRING, "end_state": STRING, "reason": STRING, "achieved": BOOLEAN})


def _result(ctx: ConversationContext, answer: dict, goal: str) -> MetricResult:
    achieved = bool(answer["achieved"])
    verdict = ctx.text("达成" if achieved else "未达成", "achieved" if achieved else "not achieved")
    feedback = ctx.text(f"{verdict}：{answer['reason']}（实际结果：{answer['end_state']}）",
                        f"{verdict}: {answer['reason']} (end state: {answer['end_state']})")
    return MetricResult(score=1.0 if achieved else 0.0, feedback=feedback,
                        evidence=[Evidence(item=goal, passed=achieved, detail=answer["reason"],
                                           span=answer["end_state"])],
                        details={"goal": goal, "end_state": answer["end_state"], "reason": answer["reason"],
                                 "achieved": achieved})


async def with_reference(ctx: ConversationContext) -> MetricResult:
    answer = await ask_judge(ctx, "goal_with_reference", WITH_REFERENCE,
                             reference_outcome=ctx.conversation.reference_outcome)
    return _result(ctx, answer, ctx.conversation.reference_outcome)


async def without_reference(ctx: ConversationContext) -> MetricResult:
    answer = await ask_judge(ctx, "goal_without_reference", WITHOUT_REFERENCE)
    result = _result(ctx, answer, answer["user_goal"])
    result.details["inferred_goal"] = True
    return result


def plan_with_reference(ctx: ConversationContext, lookup: CacheLookup | None) -> list[PlannedCall]:
    return [planned(ctx, "goal_with_reference", WITH_REFERENCE, "agent_goal_accuracy",
                    reference_outcome=ctx.conversation.reference_outcome)]


def plan_without_reference(ctx: ConversationContext, lookup: CacheLookup | None) -> list[PlannedCall]:
    return [planned(ctx, "goal_without_reference", WITHOUT_REFERENCE, "agent_goal_accuracy_without_reference")]


SPEC = ConversationMetricSpec(
    name="agent_goal_accuracy", family="llm", needs_judge=True, required_fields=("reference_outcome",),
    compute=with_reference, plan=plan_with_reference,
    summary="1 if the outcome reached matches the reference outcome, else 0 (Ragas AgentGoalAccuracyWithReference)")
WITHOUT_REFERENCE_SPEC = ConversationMetricSpec(
    name="agent_goal_accuracy_without_reference", family="llm", needs_judge=True, required_fields=(),
    compute=without_reference, plan=plan_without_reference,
    summary="1 if the outcome reached achieves the goal the judge infers, else 0 (Ragas …WithoutReference)")
