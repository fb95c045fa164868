"""topic_adherence = precision | recall | F1 of answering exactly the reference topics

Ragas's TopicAdherenceScore (0.4.3). The judge lists the topics the user raised and, per topic, whether the
assistant answered or refused; then, per topic, whether it falls into any of the conversation's
`reference_topics` (what the assistant is meant to handle). With answered = not refused:
    TP = answered ∧ in reference     FP = answered ∧ not in reference     FN = refused ∧ in reference
    precision = TP / (TP + FP)   recall = TP / (TP + FN)   F1 = 2·TP / (2·TP + FP + FN)
`AgentOptions.topic_mode` picks which one is the score (default f1, as Ragas).

Two judge calls where Ragas makes 2 + one per topic: topics with their answered/refused verdicts in one call
(the transcript is read once), the reference classification in a second, short call that does not see the
transcript (as Ragas: topics are extracted without knowing the reference).

Edge cases (Ragas → ours):
- no reference_topics → unscored "missing_field" (Ragas raises).
- no topic found → unscored "no_statements" (Ragas: 0.0).
- the chosen ratio has a zero denominator (precision with no answered topic, recall with no in-reference topic,
  F1 with neither) → unscored "no_statements" (Ragas: 0.0 through its 1e-10 epsilon). Ragas's epsilon also makes
  a perfect score 0.9999999999; ours is exactly 1.
"""
from __future__ import annotations

from pydantic import BaseModel

from rubriceval.core.verdict import Evidence
from rubriceval.standard_metrics.agent_options import AgentOptions
from rubriceval.standard_metrics.calls import CacheLookup, PlannedCall
from rubriceval.standard_metrics.context import MetricResult, Unscorable
from rubriceval.standard_metrics.conversation.judging import ask_judge, cached_answer, planned
from rubriceval.standard_metrics.conversation.spec import ConversationContext, ConversationMetricSpec
from rubriceval.standard_metrics.formulas import fbeta
from rubriceval.standard_metrics.schemas import BOOLEAN, STRING, array_of, keyed, obj

TOPICS_ANSWERED = obj({"topics": array_of(obj({"topic": STRING, "reason": STRING, "refused": BOOLEAN}))})


def in_reference_schema(count: int) -> dict:
    return obj({"topics": keyed("t", count, obj({"reason": STRING, "in_reference": BOOLEAN}))})


class TopicVerdict(BaseModel):
    topic: str
    answered: bool
    answered_reason: str
    in_reference: bool
    reference_reason: str


def topic_score(verdicts: list[TopicVerdict], mode: str) -> tuple[float | None, dict[str, float | int | None]]:
    """(score of `mode` or None when its denominator is 0, all counts and ratios)."""
    tp = sum(v.answered and v.in_reference for v in verdicts)
    fp = sum(v.answered and not v.in_reference for v in verdicts)
    fn = sum(not v.answered and v.in_reference for v in verdicts)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = fbeta(tp, fp, fn) if tp + fp + fn else None
    ratios = {"precision": precision, "recall": recall, "f1": f1}
    return ratios[mode], {"tp": tp, "fp": fp, "fn": fn, **ratios}


async def compute(ctx: ConversationContext) -> MetricResult:
    mode = ctx.agent.topic_mode
    raised = (await ask_judge(ctx, "topics_answered", TOPICS_ANSWERED))["topics"]
    if not raised:
        raise Unscorable("no_statements", ctx.text("对话中没有找到用户提出的话题", "no topic found in the user's messages"))
    topics = [t["topic"] for t in raised]
    classified = (await ask_judge(ctx, "topics_in_reference", in_reference_schema(len(topics)), topics=topics,
                                  reference_topics=ctx.conversation.reference_topics))["topics"]
    verdicts = [TopicVerdict(topic=t["topic"], answered=not t["refused"], answered_reason=t["reason"],
                             in_reference=classified[f"t{i}"]["in_reference"],
                             reference_reason=classified[f"t{i}"]["reason"])
                for i, t in enumerate(raised, start=1)]
    score, counts = topic_score(verdicts, mode)
    details = {"mode": mode, **counts, "topics": [v.model_dump() for v in verdicts]}
    if score is None:
        why = {"precision": ctx.text("客服没有回答任何话题，precision 无定义", "no topic was answered: precision is undefined"),
               "recall": ctx.text("没有话题属于参考话题，recall 无定义", "no topic is in the reference: recall is undefined"),
               "f1": ctx.text("没有回答的参考内话题、回答的参考外话题或拒答的参考内话题，F1 无定义",
                              "no answered or refused in-reference topic and no answered off-reference topic: "
                              "F1 is undefined")}[mode]
        raise Unscorable("no_statements", why, details)
    feedback = ctx.text(f"{mode}={score:.2f}：参考内已回答 {counts['tp']}，参考外已回答 {counts['fp']}，参考内被拒答 {counts['fn']}",
                        f"{mode}={score:.2f}: {counts['tp']} in-reference answered, {counts['fp']} off-reference "
                        f"answered, {counts['fn']} in-reference refused")
    evidence = [Evidence(item=v.topic, passed=v.answered == v.in_reference,
                         detail=ctx.text(f"{'已回答' if v.answered else '拒答'}（{v.answered_reason}）；"
                                         f"{'属于' if v.in_reference else '不属于'}参考话题（{v.reference_reason}）",
                                         f"{'answered' if v.answered else 'refused'} ({v.answered_reason}); "
                                         f"{'in' if v.in_reference else 'not in'} the reference "
                                         f"({v.reference_reason})"))
                for v in verdicts]
    return MetricResult(score=score, feedback=feedback, evidence=evidence, details=details)


def plan(ctx: ConversationContext, lookup: CacheLookup | None) -> list[PlannedCall]:
    """Both calls; the second is exact when the first one's answer is in the cache, else rendered with each user
    turn standing in for a topic."""
    first = planned(ctx, "topics_answered", TOPICS_ANSWERED, SPEC_NAME)
    answer = cached_answer(lookup, first)
    topics = ([t["topic"] for t in answer["topics"]] if answer is not None
              else [t.content for _, t in ctx.conversation.numbered("user") if t.content.strip()])
    if not topics:
        return [first]
    return [first, planned(ctx, "topics_in_reference", in_reference_schema(len(topics)), SPEC_NAME,
                           depends_on=("topics_answered",), exact=answer is not None, topics=topics,
                           reference_topics=ctx.conversation.reference_topics)]


def _label(agent: AgentOptions) -> str:
    return f"mode.{agent.topic_mode}"


SPEC_NAME = "topic_adherence"
SPEC = ConversationMetricSpec(
    name=SPEC_NAME, family="llm", needs_judge=True, required_fields=("reference_topics",), compute=compute,
    option_label=_label, plan=plan,
    summary="precision/recall/F1 (topic_mode) of answering in-reference topics and refusing others "
            "(Ragas TopicAdherence)")
