"""A conversation metric's declaration, and what its `compute` reads.

A conversation metric scores one whole `Conversation` (tool calls, goal, topics) into one verdict. Fields it
needs are checked before any call: an empty one makes it unscored "missing_field" (an empty list cannot be told
apart from a dataset that lacks the column — the rule the single-turn metrics follow too).
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rubriceval.core.verdict import Usage
from rubriceval.data.conversation import Conversation
from rubriceval.standard_metrics.agent_options import AgentOptions
from rubriceval.standard_metrics.calls import CacheLookup, PlannedCall
from rubriceval.standard_metrics.context import MetricResult, Unscorable
from rubriceval.standard_metrics.options import MetricOptions

# tool: deterministic tool-call metrics; llm: judged ones.
ConversationFamily = Literal["tool", "llm"]


def conversation_language(conversation: Conversation) -> str:
    """'zh' when a user or assistant turn holds CJK characters, else 'en' (as Sample.language)."""
    text = conversation.text_of("user") + conversation.text_of("assistant")
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"


class ConversationContext:
    """The conversation, the options, the judge; judge calls made through `spend` add to this metric's usage."""

    def __init__(self, conversation: Conversation, options: MetricOptions, agent: AgentOptions, language: str,
                 judge: Any = None):
        self.conversation = conversation
        self.options = options
        self.agent = agent
        self.language = language
        self.judge = judge
        self.usage = Usage()

    def text(self, zh: str, en: str) -> str:
        return zh if self.language == "zh" else en

    def spend(self, usage: Usage) -> None:
        self.usage = self.usage + usage


@dataclass(frozen=True)
class ConversationMetricSpec:
    name: str
    family: ConversationFamily
    summary: str
    required_fields: tuple[str, ...]      # Conversation fields; empty → unscored "missing_field", no call made
    compute: Callable[[ConversationContext], Awaitable[MetricResult]]
    needs_judge: bool = False
    version: str = "1"
    # The option values that change this metric's score, as text: part of its scorer version.
    option_label: Callable[[AgentOptions], str] = field(default=lambda agent: "")
    # The judge calls `compute` will make, for dry runs (judged metrics only).
    plan: Callable[[ConversationContext, CacheLookup | None], list[PlannedCall]] = field(
        default=lambda ctx, lookup: [])

    def missing_field(self, ctx: ConversationContext) -> Unscorable | None:
        for name in self.required_fields:
            value = getattr(ctx.conversation, name)
            if not value.strip() if isinstance(value, str) else not value:
                return Unscorable("missing_field", ctx.text(f"对话缺少 {name}（为空），{self.name} 无法计算",
                                                            f"{self.name} needs a non-empty {name}"))
        return None
