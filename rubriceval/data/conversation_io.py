"""Conversation records (one per JSONL line or JSON list item) → Conversations and Samples, with errors that name
file:line [field]. `read_dataset` calls these for every record that holds a message list."""
from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from rubriceval.common.errors import DatasetError
from rubriceval.data.conversation import (
    Conversation,
    TurnProblem,
    conversation_from_record,
    is_conversation_record,
    turns_key,
)
from rubriceval.data.sample import Sample

__all__ = ["conversation_sample", "is_conversation_record", "parse_conversation"]


def _field_name(loc: tuple[Any, ...], key: str) -> str:
    """pydantic's ('turns', 3, 'role') → 'messages[4].role': the record's own key, turns counted from 1."""
    parts: list[str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int) and i > 0:
            parts[-1] += f"[{part + 1}]"
        else:
            parts.append(key if (i == 0 and part == "turns") else str(part))
    return ".".join(parts)


def parse_conversation(record: dict[str, Any], *, file: str, line: int, position: int) -> Conversation:
    """One record → Conversation; the id defaults to conv-<position> like single-turn rows' row-<n>."""
    key = turns_key(record)
    record = dict(record)
    if record.get("id") in (None, ""):
        record["id"] = f"conv-{position}"
    try:
        return conversation_from_record(record)
    except ValidationError as exc:
        err = exc.errors()[0]
        problem = (err.get("ctx") or {}).get("error")
        if isinstance(problem, TurnProblem):
            field = key + problem.field.removeprefix("turns")
            raise DatasetError(str(problem), file=file, line=line, field=field) from None
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "literal_error" and err["loc"][-1] == "role":
            message += f" (got {err['input']!r})"
        raise DatasetError(message, file=file, line=line, field=_field_name(tuple(err["loc"]), key)) from None


def conversation_sample(conversation: Conversation) -> Sample:
    """A conversation travels through runs, stores and reports as a Sample that carries it whole; question/answer
    (first user turn, last assistant turn) are what a one-line listing shows."""
    users = [t.content for _, t in conversation.numbered("user") if t.content.strip()]
    bots = [t.content for _, t in conversation.numbered("assistant") if t.content.strip()]
    return Sample(id=conversation.id, question=users[0] if users else "", answer=bots[-1] if bots else "",
                  ground_truth=conversation.reference_outcome, tags=conversation.tags, intent=conversation.intent,
                  metadata=conversation.metadata, conversation=conversation)


