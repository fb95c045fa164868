"""Single-turn metrics (faithfulness, answer_relevancy, context_utilization, … and the non-LLM ones) on each
assistant turn of a conversation, aggregated per conversation.

Each assistant turn that says something becomes a single-turn `Sample` — question = the user turn(s) since the
previous assistant reply, answer = the turn's text, contexts = what the turn retrieved — and is scored by the
standard machinery (`single_turn.score_single_turn`, so the turn's metrics share their judge calls exactly as for a
single-turn dataset). A metric that reads contexts is applied only to turns that have contexts; a turn with no
text (a pure tool call) is never a sample.

The conversation's score is the mean over the scored turns; a turn that is unscored is counted and listed, not
averaged in. No turn scored → the conversation is unscored: "missing_field" when no turn had what the metric
reads, else the turns' own reason. Conversations carry no per-turn ground truth, so metrics that need one
(answer_correctness, context_precision/recall, string metrics) are unscored "missing_field" without any call.
"""
from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from rubriceval.core.verdict import Evidence, Usage, Verdict
from rubriceval.data.conversation import Conversation
from rubriceval.data.sample import Sample
from rubriceval.standard_metrics.catalog import METRICS
from rubriceval.standard_metrics.names import resolve_names
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.single_turn import score_single_turn

TURN_VERSION = "turns1"


class TurnSample(BaseModel):
    turn: int                 # the assistant turn's number in the conversation (from 1)
    sample: Sample


def turn_samples(conversation: Conversation) -> list[TurnSample]:
    """One Sample per assistant turn with text; the question gathers the user turns since the last reply."""
    samples: list[TurnSample] = []
    asked: list[str] = []
    for number, turn in conversation.numbered():
        if turn.role == "user" and turn.content.strip():
            asked.append(turn.content)
        elif turn.role == "assistant" and turn.content.strip():
            samples.append(TurnSample(turn=number, sample=Sample(
                id=f"{conversation.id}#{number}", question="\n".join(asked), answer=turn.content,
                contexts=list(turn.contexts), tags=list(conversation.tags), intent=conversation.intent,
                metadata={"conversation_id": conversation.id, "turn": number})))
            asked = []
    return samples


def eligible_names(names: list[str], item: TurnSample) -> list[str]:
    """The metrics that apply to this turn: those reading contexts only where the turn has some."""
    return [n for n in names if "contexts" not in METRICS[n].required_fields or item.sample.contexts]


class TurnOutcome(BaseModel):
    turn: int
    verdict: Verdict


def aggregate(conversation: Conversation, name: str, outcomes: list[TurnOutcome], *, reason_if_none: str,
              lang: str) -> Verdict:
    """The conversation verdict of one metric from its per-turn verdicts (see the module docstring)."""
    usage = sum((o.verdict.usage for o in outcomes), Usage())
    per_turn = [{"turn": o.turn, "score": o.verdict.score, "unscored_kind": o.verdict.unscored_kind,
                 "unscored_reason": o.verdict.unscored_reason, "feedback": o.verdict.feedback} for o in outcomes]
    evidence = [Evidence(item=f"turn {o.turn}", score=o.verdict.score, passed=None,
                         detail=o.verdict.feedback if o.verdict.scored else
                         f"{o.verdict.unscored_kind}: {o.verdict.unscored_reason}") for o in outcomes]
    scored = [o for o in outcomes if o.verdict.scored]
    unscored = [o for o in outcomes if not o.verdict.scored]
    version = (outcomes[0].verdict.scorer_version if outcomes else "") + f"+{TURN_VERSION}"
    common: dict[str, Any] = dict(sample_id=conversation.id, scorer=name, kind="metric", scorer_version=version,
                                  usage=usage, evidence=evidence,
                                  details={"per_turn": per_turn, "scored_turns": [o.turn for o in scored],
                                           "unscored_turns": [o.turn for o in unscored], "aggregate": "mean"})
    if not scored:
        kinds = {o.verdict.unscored_kind for o in unscored}
        kind = kinds.pop() if len(kinds) == 1 else "error"
        reason = (reason_if_none if not outcomes else
                  "; ".join(f"turn {o.turn}: {o.verdict.unscored_reason}" for o in unscored[:5]))
        return Verdict(**common, unscored_kind=kind if outcomes else "missing_field", unscored_reason=reason)
    mean = sum(o.verdict.score for o in scored) / len(scored)
    feedback = (f"{len(scored)} 轮的均值" if lang == "zh" else f"mean over {len(scored)} turn(s)")
    if unscored:
        feedback += (f"；{len(unscored)} 轮未评分（计数，不计入均值）：" if lang == "zh"
                     else f"; {len(unscored)} turn(s) unscored (counted, not averaged): ")
        feedback += ", ".join(f"{o.turn} ({o.verdict.unscored_kind})" for o in unscored)
    return Verdict(**common, score=mean, feedback=feedback)


async def score_turns(conversation: Conversation, names: list[str], *, judge: Any, embedder: Any,
                      options: MetricOptions, lang: str) -> list[Verdict]:
    """One conversation verdict per single-turn metric name, in the order given."""
    items = turn_samples(conversation)
    wanted = {item.turn: eligible_names(names, item) for item in items}
    results = await asyncio.gather(*(score_single_turn(item.sample, resolve_names(wanted[item.turn]), judge=judge,
                                                       embedder=embedder, options=options)
                                     for item in items if wanted[item.turn]))
    by_turn = dict(zip([item.turn for item in items if wanted[item.turn]], results))
    verdicts = []
    for name in names:
        outcomes = [TurnOutcome(turn=turn, verdict=v) for turn, vs in by_turn.items() for v in vs if v.scorer == name]
        needs = ", ".join(METRICS[name].required_fields)
        reason = (f"没有可评的客服轮次（{name} 需要：{needs}）" if lang == "zh"
                  else f"no assistant turn has what {name} needs ({needs})")
        verdicts.append(aggregate(conversation, name, outcomes, reason_if_none=reason, lang=lang))
    return verdicts
