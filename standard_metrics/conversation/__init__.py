"""Metrics over whole conversations: Ragas's agent metrics and single-turn metrics per assistant turn.

    from rubriceval.standard_metrics.conversation import score_conversation
    verdicts = await score_conversation(conversation, ["tool_call_accuracy", "faithfulness"], judge=judge)

tool_call_accuracy, tool_call_f1 (deterministic), agent_goal_accuracy(_without_reference), topic_adherence (judged,
prompts in `standard_metrics/templates/agent/`), per_turn (any single-turn metric per assistant turn). The names
are listed by `standard_metrics.registry.list_metrics`.
"""
from rubriceval.common.lazy import lazy_exports

# Imported on first use, as standard_metrics' own exports: reading the catalogue (names.py, scope.py) must not
# import the scorers, whose per-turn part reads names.py back.
_HOME = {"CONVERSATION_METRICS": "rubriceval.standard_metrics.conversation.catalog",
         "AgentOptions": "rubriceval.standard_metrics.agent_options",
         "score_conversation": "rubriceval.standard_metrics.conversation.scoring"}
__all__ = sorted(_HOME)

__getattr__ = lazy_exports(__name__, _HOME, globals())
