"""`judge.redact: true`: personal data masked with typed placeholders before any judge or embedder sees a sample.

Placeholders are numbered per kind and consistent within a sample: the same phone number written as `138 0013 8000`
in the question and `13800138000` in a context is `[手机号1]` in both, so the judge can still tell "the bot repeated
the customer's number" from "the bot gave another number". The mapping placeholder → original stays on this machine
(the run store keeps it with the verdict); `restore` puts the originals back for a logged-in expert in the audit app.
"""
from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from rubriceval.data.conversation import Conversation, ToolCall
from rubriceval.data.sample import Sample
from rubriceval.safety.pii import PiiKind, find_pii

_PLACEHOLDER = re.compile(r"\[(?:手机号|电话|身份证|银行卡|邮箱|地址)\d+\]")


class Redaction(BaseModel):
    """placeholder → the original text it replaced (first spelling seen)."""

    mapping: dict[str, str] = Field(default_factory=dict)
    _slots: dict[str, str] = PrivateAttr(default_factory=dict)   # "kind:normalised value" → placeholder

    def placeholder(self, kind: PiiKind, key: str, original: str) -> str:
        slot = f"{kind}:{key}"
        if slot not in self._slots:
            number = sum(1 for p in self.mapping if p.startswith(f"[{kind}")) + 1
            self._slots[slot] = f"[{kind}{number}]"
            self.mapping[self._slots[slot]] = original
        return self._slots[slot]

    def mask(self, text: str) -> str:
        """`text` with every personal-data span replaced by its placeholder."""
        if not text:
            return text
        pieces, last = [], 0
        for span in find_pii(text):
            pieces += [text[last:span.start], self.placeholder(span.kind, span.key, span.text)]
            last = span.end
        return "".join(pieces) + text[last:]

    def mask_value(self, value: Any) -> Any:
        """Strings masked; lists and dicts masked item by item; anything else unchanged."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, list):
            return [self.mask_value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.mask_value(v) for k, v in value.items()}
        return value


# What a judge or embedder may read of a sample (metadata is never sent).
SAMPLE_TEXT_FIELDS = ("question", "answer", "contexts", "ground_truth", "reference_contexts", "intent")
CONVERSATION_TEXT_FIELDS = ("reference_outcome", "reference_topics")


def redact_sample(sample: Sample) -> tuple[Sample, Redaction]:
    """(the Sample with personal data masked in every field a judge or embedder reads, its Redaction); one
    Redaction per sample, so placeholders agree across question, answer, contexts and conversation turns."""
    redaction = Redaction()
    update: dict[str, Any] = {name: redaction.mask_value(getattr(sample, name)) for name in SAMPLE_TEXT_FIELDS}
    if sample.conversation is not None:
        update["conversation"] = redact_conversation(sample.conversation, redaction)
    return sample.model_copy(update=update), redaction


def redact_conversation(conversation: Conversation, redaction: Redaction) -> Conversation:
    turns = [turn.model_copy(update={"content": redaction.mask(turn.content),
                                     "contexts": redaction.mask_value(turn.contexts),
                                     "tool_calls": _mask_calls(redaction, turn.tool_calls)})
             for turn in conversation.turns]
    return conversation.model_copy(update={
        "turns": turns, "reference_tool_calls": _mask_calls(redaction, conversation.reference_tool_calls),
        **{name: redaction.mask_value(getattr(conversation, name)) for name in CONVERSATION_TEXT_FIELDS}})


def _mask_calls(redaction: Redaction, calls: list[ToolCall]) -> list[ToolCall]:
    return [call.model_copy(update={"arguments": redaction.mask_value(call.arguments)}) for call in calls]


def restore(text: str, mapping: dict[str, str]) -> str:
    """Placeholders put back to their originals (for logged-in experts); unknown placeholders stay as written."""
    if not text or not mapping:
        return text
    return _PLACEHOLDER.sub(lambda m: mapping.get(m.group(), m.group()), text)


REDACTIONS_KEY = "redactions"   # verdict.details key holding placeholder → original (kept in the local run store only)


def judge_view(sample: Sample, redact: bool) -> tuple[Sample, Redaction]:
    """What a judge or embedder may read of `sample`: masked when `judge.redact` is on, else the sample itself."""
    return redact_sample(sample) if redact else (sample, Redaction())


def record_redactions(verdict, redaction: Redaction):
    """The verdict with the placeholder mapping in its details (nothing added when nothing was masked)."""
    if not redaction.mapping:
        return verdict
    return verdict.model_copy(update={"details": {**verdict.details, REDACTIONS_KEY: dict(redaction.mapping)}})


def restore_for_expert(text: str, details: dict) -> str:
    """The audit app's hook: `text` (feedback, a masked field) with the originals of this verdict's placeholders."""
    return restore(text, (details or {}).get(REDACTIONS_KEY, {}))
