"""Collect answers and retrieved contexts from a live chatbot (Python callable, HTTP endpoint or OpenAI chat)."""
from rubriceval.collect.collector import collect, read_partial_output
from rubriceval.collect.conversations import collect_conversations
from rubriceval.collect.resumable import CollectSummary, RowError
from rubriceval.collect.targets import (CallableTarget, HttpTarget, OpenAIChatTarget, TargetConfig, TargetReply,
                                        TargetRunner, coerce_reply, open_target, parse_target)

__all__ = ["CallableTarget", "CollectSummary", "collect_conversations", "HttpTarget", "OpenAIChatTarget", "RowError", "TargetConfig",
           "TargetReply", "TargetRunner", "coerce_reply", "collect", "open_target", "parse_target",
           "read_partial_output"]
