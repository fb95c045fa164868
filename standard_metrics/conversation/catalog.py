"""The conversation metrics by name (single-turn metrics also score conversations, per assistant turn)."""
from __future__ import annotations

from rubriceval.standard_metrics.conversation import (
    agent_goal_accuracy,
    tool_call_accuracy,
    tool_call_f1,
    topic_adherence,
)
from rubriceval.standard_metrics.conversation.spec import ConversationMetricSpec

CONVERSATION_METRICS: dict[str, ConversationMetricSpec] = {spec.name: spec for spec in [
    tool_call_accuracy.SPEC,
    tool_call_f1.SPEC,
    agent_goal_accuracy.SPEC,
    agent_goal_accuracy.WITHOUT_REFERENCE_SPEC,
    topic_adherence.SPEC,
]}
