"""Score one conversation: agent metrics on the whole dialogue, single-turn metrics per assistant turn.

    verdicts = await score_conversation(conversation, ["tool_call_accuracy", "topic_adherence", "faithfulness"],
                                        judge=judge, agent_options={"topic_mode": "recall"})

One Verdict per distinct name, in the order asked, each with `sample_id = conversation.id`. Usage: each verdict
carries exactly the calls made for it (per-turn metrics: summed over the turns, shared calls charged as
`score_sample` charges them), so summing over a conversation's verdicts gives what was spent.
"""
from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from rubriceval.common.errors import ConfigError
from rubriceval.core.verdict import Verdict
from rubriceval.data.conversation import Conversation
from rubriceval.standard_metrics.agent_options import AgentOptions
from rubriceval.standard_metrics.context import Unscorable
from rubriceval.standard_metrics.conversation.catalog import CONVERSATION_METRICS
from rubriceval.standard_metrics.conversation.judging import fingerprint
from rubriceval.standard_metrics.conversation.per_turn import score_turns
from rubriceval.standard_metrics.conversation.spec import (
    ConversationContext,
    ConversationMetricSpec,
    conversation_language,
)
from rubriceval.standard_metrics.options import MetricOptions


def _version(spec: ConversationMetricSpec, ctx: ConversationContext) -> str:
    version = spec.version
    if label := spec.option_label(ctx.agent):
        version += f"+{label}"
    if spec.needs_judge:
        version += f"+tpl.{fingerprint(ctx.options.template_dir, ctx.language)}"
    return version


async def _score_one(spec: ConversationMetricSpec, ctx: ConversationContext) -> Verdict:
    common: dict[str, Any] = dict(sample_id=ctx.conversation.id, scorer=spec.name, kind="metric",
                                  scorer_version=_version(spec, ctx))
    try:
        missing = spec.missing_field(ctx)
        if missing is not None:
            raise missing
        result = await spec.compute(ctx)
        return Verdict(**common, usage=ctx.usage, score=result.score, feedback=result.feedback,
                       evidence=result.evidence, details=result.details)
    except Unscorable as reason:
        return Verdict(**common, usage=ctx.usage, unscored_kind=reason.kind, unscored_reason=reason.reason,
                       details=reason.details)


async def score_conversation(conversation: Conversation, metric_names: Iterable[str], *, judge: Any = None,
                             embedder: Any = None, options: MetricOptions | dict | None = None,
                             agent_options: AgentOptions | dict | None = None) -> list[Verdict]:
    from rubriceval.standard_metrics.catalog import METRICS
    from rubriceval.standard_metrics.names import check_known

    opts = MetricOptions.coerce(options)
    agent = (opts.agent if agent_options is None else agent_options if isinstance(agent_options, AgentOptions)
             else AgentOptions.model_validate(agent_options))
    names = list(dict.fromkeys(check_known(metric_names)))
    lang = opts.language or conversation_language(conversation)
    agent_specs = [CONVERSATION_METRICS[n] for n in names if n in CONVERSATION_METRICS]
    if judge is None and any(s.needs_judge and not s.missing_field(ConversationContext(conversation, opts, agent, lang))
                             for s in agent_specs):
        raise ConfigError(", ".join(s.name for s in agent_specs if s.needs_judge) + " need a judge", field="judge")
    turn_names = [n for n in names if n in METRICS]
    jobs = [_score_one(s, ConversationContext(conversation, opts, agent, lang, judge)) for s in agent_specs]
    agent_verdicts, turn_verdicts = await asyncio.gather(
        asyncio.gather(*jobs),
        score_turns(conversation, turn_names, judge=judge, embedder=embedder, options=opts, lang=lang))
    by_name = {v.scorer: v for v in [*agent_verdicts, *turn_verdicts]}
    return [by_name[n] for n in names]
