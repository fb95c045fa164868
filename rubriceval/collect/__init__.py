"""Collect answers and retrieved contexts from a live chatbot (Python callable, HTTP endpoint or OpenAI chat):
one question per row (`collect`), or whole conversations from scripted or simulated users (`collect_conversations`)."""
from rubriceval.collect.collector import collect, read_partial_output
from rubriceval.collect.conversations import collect_conversations
from rubriceval.collect.resumable import CollectSummary, RowError
from rubriceval.collect.targets import (
                                        CallableTarget,
                                        HttpTarget,
                                        OpenAIChatTarget,
                                        TargetConfig,
                                        TargetReply,
                                        TargetRunner,
                                        coerce_reply,
                                        open_target,
                                        parse_target,
)

__all__ = ["CallableTarget", "CollectSummary", "HttpTarget", "OpenAIChatTarget", "RowError", "TargetConfig",
           "TargetReply", "TargetRunner", "coerce_reply", "collect", "collect_conversations", "open_target",
           "parse_target", "read_partial_output"]
