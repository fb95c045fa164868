"""What scoring a conversation will ask the judge, before asking: for `--dry-run` token counts and cache checks.

Agent metrics list their own calls (`ConversationMetricSpec.plan`); single-turn metrics list the calls of each
assistant turn's sample exactly as `registry.planned_requests` does for a single-turn dataset. A metric whose
required field is empty plans nothing (it will be unscored without a call).
"""
from __future__ import annotations

from rubriceval.data.conversation import Conversation
from rubriceval.standard_metrics.agent_options import AgentOptions
from rubriceval.standard_metrics.calls import CacheLookup, PlannedCall
from rubriceval.standard_metrics.conversation.catalog import CONVERSATION_METRICS
from rubriceval.standard_metrics.conversation.per_turn import eligible_names, turn_samples
from rubriceval.standard_metrics.conversation.spec import ConversationContext, conversation_language
from rubriceval.standard_metrics.names import resolve_names
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.single_turn import planned_single_turn_requests


def planned_conversation_requests(conversation: Conversation, names: list[str], options: MetricOptions,
                                  agent: AgentOptions, lookup: CacheLookup | None = None, *,
                                  judge_model: str | None = None) -> list[PlannedCall]:
    ctx = ConversationContext(conversation, options, agent, options.language or conversation_language(conversation))
    planned: list[PlannedCall] = []
    for name in names:
        spec = CONVERSATION_METRICS.get(name)
        if spec is not None and spec.missing_field(ctx) is None:
            planned += spec.plan(ctx, lookup)
    turn_names = [n for n in names if n not in CONVERSATION_METRICS]
    for item in turn_samples(conversation) if turn_names else []:
        if wanted := eligible_names(turn_names, item):
            planned += planned_single_turn_requests(item.sample, resolve_names(wanted), options, lookup=lookup,
                                                    judge_model=judge_model)
    return planned
