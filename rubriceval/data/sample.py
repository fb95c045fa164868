"""One evaluated turn of a chatbot conversation."""
from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_serializer, model_validator

from rubriceval.data.coerce import string_list, tag_list
from rubriceval.data.conversation import Conversation

# Ragas's column names map onto ours, so a Ragas dataset loads unchanged.
COLUMN_ALIASES: dict[str, str] = {
    "user_input": "question",
    "response": "answer",
    "retrieved_contexts": "contexts",
    "reference": "ground_truth",
    "ground_truths": "ground_truth",
    "reference_contexts": "reference_contexts",
    "intent": "intent",
}
_RENAMED = {key for key, name in COLUMN_ALIASES.items() if key != name}
GENERATED_ID_PREFIX = "s-"


def content_id(payload: dict[str, Any]) -> str:
    """A stable id from what identifies a test case (what a row without an id gets): its question and reference —
    not the answer or the retrieved contexts, which change from one bot version to the next — so two versions'
    runs of the same questions pair up in comparisons and regression gates."""
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)
    return GENERATED_ID_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:12]


class Sample(BaseModel):
    """question → answer (with retrieved contexts), judged against an expert ground truth."""

    id: str = ""                 # "": generated from the question and reference (content_id)
    question: str
    answer: str = ""
    contexts: list[str] = Field(default_factory=list)
    ground_truth: str = ""
    reference_contexts: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    intent: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    # A whole dialogue (question = its first user turn, answer = its last assistant turn, for display).
    conversation: Conversation | None = None

    @model_validator(mode="before")
    @classmethod
    def _ragas_names(cls, data: Any) -> Any:
        """Sample(user_input=…, response=…, retrieved_contexts=…, reference=…) as Ragas's SingleTurnSample takes."""
        if isinstance(data, dict) and not _RENAMED.isdisjoint(data):
            data = dict(data)
            for key in _RENAMED.intersection(data):
                value = data.pop(key)
                data.setdefault(COLUMN_ALIASES[key], value)
        return data

    @model_validator(mode="after")
    def _generated_id(self) -> Sample:
        if not self.id:
            self.id = content_id({"question": self.question, "ground_truth": self.ground_truth,
                                  "reference_contexts": self.reference_contexts})
        return self

    @model_serializer(mode="wrap")
    def _omit_no_conversation(self, handler):
        """Single-turn samples dump (and hash) exactly as before conversations existed."""
        data = handler(self)
        if isinstance(data, dict) and data.get("conversation", 0) is None:
            data.pop("conversation")
        return data

    @field_validator("contexts", "reference_contexts", mode="before")
    @classmethod
    def _list_of_str(cls, value: Any) -> Any:
        return string_list(value)

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        return tag_list(value)

    def input_hash(self) -> str:
        """Hash of everything a judge may read: changes when an expert edits the row."""
        payload = self.model_dump(exclude={"metadata"})
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def language(self) -> Literal["zh", "en"]:
        """'zh' when the question or answer holds CJK characters, else 'en'."""
        return text_language(self.question + self.answer)


def text_language(text: str) -> Literal["zh", "en"]:
    """'zh' when the text holds CJK characters, else 'en' (a sample's language, from its question and answer)."""
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"
