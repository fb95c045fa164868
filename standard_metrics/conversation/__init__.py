"""Metrics over whole conversations: Ragas's agent metrics and single-turn metrics per assistant turn.

    from standard_metrics.conversation import score_conversation
    verdicts = await score_conversation(conversation, ["tool_call_accuracy", "faithfulness"], judge=judge)

tool_call_accuracy, tool_call_f1 (deterministic), agent_goal_accuracy(_without_reference), topic_adherence (judged,
prompts in `standard_metrics/templates/agent/`), per_turn (any single-turn metric per assistant turn). The names
are listed by `standard_metrics.registry.list_metrics`.
"""
from standard_metrics.conversation.catalog import CONVERSATION_METRICS
from standard_metrics.agent_options import AgentOptions
from standard_metrics.conversation.scoring import score_conversation

__all__ = ["CONVERSATION_METRICS", "AgentOptions", "score_conversation"]
