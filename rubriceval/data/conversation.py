"""A whole customer-service conversation: ordered turns (user, assistant, tool, system) plus what an expert expects.

Accepted as written in three shapes: our own (`turns`), OpenAI chat `messages` (assistant `tool_calls` with
`function: {name, arguments: JSON text}`, `role: tool` with `tool_call_id`), and Ragas MultiTurnSample JSON
(`user_input` as a message list with `type: human|ai|tool`, `reference`, `reference_tool_calls`, `reference_topics`).
Turn numbers count from 1 everywhere a person reads them (errors, transcripts, check evidence).
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rubriceval.data.coerce import string_list, tag_list

# "bot": a chatbot speaking in a conversation a human agent (the assistant) is scored on — shown in the transcript
# as 机器人, never one of the assistant's turns (`turns: assistant`, first/final turn, response times).
Role = Literal["user", "assistant", "tool", "system", "bot"]
ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system", "bot")
# Ragas message types → roles.
RAGAS_TYPES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
# The list field a conversation record keeps its turns in, in the order they are looked for.
TURN_KEYS = ("turns", "messages", "user_input")


class TurnProblem(ValueError):
    """A conversation-level rule broken at one turn; `field` names where (e.g. turns[4].tool_call_id)."""

    def __init__(self, message: str, field: str, turn: int | None = None):
        super().__init__(message)
        self.field = field
        self.turn = turn       # turn number from 1; None when the whole conversation is at fault


class ToolCall(BaseModel):
    """One call the assistant made: a function name and its parsed arguments."""

    model_config = ConfigDict(populate_by_name=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None        # OpenAI's call id, which a later tool message names in tool_call_id

    @model_validator(mode="before")
    @classmethod
    def _openai_or_ragas(cls, value: Any) -> Any:
        """OpenAI nests {name, arguments: JSON text} under `function`; Ragas says `args`."""
        if not isinstance(value, dict):
            return value
        data = dict(value)
        function = data.pop("function", None)
        if isinstance(function, dict):
            data.setdefault("name", function.get("name"))
            data.setdefault("arguments", function.get("arguments"))
        if "args" in data and "arguments" not in data:
            data["arguments"] = data.pop("args")
        data.pop("type", None)
        arguments = data.get("arguments")
        if isinstance(arguments, str):
            try:
                data["arguments"] = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise ValueError(f"arguments are not valid JSON: {exc.msg}") from None
        elif arguments is None:
            data["arguments"] = {}
        return data

    def signature(self) -> str:
        return f"{self.name}({json.dumps(self.arguments, ensure_ascii=False)})"


class Turn(BaseModel):
    """One message. `contexts` are what the assistant retrieved for this turn (a knowledge base, a tool result)."""

    role: Role
    content: str = ""
    contexts: list[str] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    # Chat-log exports carry these; when present they must increase through the conversation.
    index: int | None = None
    timestamp: str | None = None
    speaker: str | None = None   # the export's own label (客服, 机器人 …) before mapping to a role

    @model_validator(mode="before")
    @classmethod
    def _ragas_type(cls, value: Any) -> Any:
        if isinstance(value, dict) and "role" not in value and "type" in value:
            value = dict(value)
            kind = value.pop("type")
            value["role"] = RAGAS_TYPES.get(str(kind), kind)
        return value

    @field_validator("content", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        """OpenAI content may be null (a pure tool call) or a list of parts; only text parts are kept."""
        if value is None:
            return ""
        if isinstance(value, list):
            return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in value)
        return value

    @field_validator("contexts", mode="before")
    @classmethod
    def _contexts(cls, value: Any) -> Any:
        return string_list(value)

    @field_validator("timestamp", "tool_call_id", "speaker", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        return None if value is None else str(value)


class ConversationFields(BaseModel):
    """What describes a conversation besides its turns: shared by conversations and the scripts that collect them."""

    id: str
    tags: list[str] = Field(default_factory=list)
    intent: str = ""
    reference_outcome: str = ""
    reference_tool_calls: list[ToolCall] = Field(default_factory=list)
    reference_topics: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", "intent", "reference_outcome", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        return "" if value is None else str(value) if isinstance(value, (int, float)) else value

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        return tag_list(value)


class Conversation(ConversationFields):
    """A dialogue to evaluate as a whole, with the outcome, tool calls and topics an expert expects."""

    turns: list[Turn] = Field(min_length=1)

    @model_validator(mode="after")
    def _coherent(self) -> Conversation:
        check_turns(self.turns)
        return self

    def numbered(self, role: str | None = None) -> list[tuple[int, Turn]]:
        """(turn number from 1, turn), optionally only one role's turns."""
        return [(n, t) for n, t in enumerate(self.turns, start=1) if role is None or t.role == role]

    @property
    def assistant_turns(self) -> list[int]:
        return [n for n, _ in self.numbered("assistant")]

    def text_of(self, role: str) -> str:
        return "\n".join(t.content for _, t in self.numbered(role))

    def content_hash(self) -> str:
        payload = self.model_dump(exclude={"metadata"})
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def _parse_time(value: str, field: str, turn: int) -> datetime:
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("/", "-"))
    except ValueError:
        raise TurnProblem(f"timestamp {value!r} is not a date-time (use e.g. 2024-05-01 10:00:05)", field,
                          turn) from None


def check_turns(turns: list[Turn]) -> None:
    """The rules no single turn can check: an assistant turn exists, tool results answer an earlier call, and turns
    are in order when they carry an index or a timestamp."""
    if not any(t.role == "assistant" for t in turns):
        raise TurnProblem("no assistant turn: there is no bot reply to evaluate", "turns")
    call_ids: set[str] = set()
    calls_seen = False
    previous_index: tuple[int, int] | None = None
    previous_time: tuple[int, datetime] | None = None
    for number, turn in enumerate(turns, start=1):
        where = f"turns[{number}]"
        if turn.role == "tool":
            if turn.tool_call_id is not None and turn.tool_call_id not in call_ids:
                known = f" (calls so far: {sorted(call_ids)})" if call_ids else " (no tool call before it)"
                raise TurnProblem(f"turn {number}: tool_call_id {turn.tool_call_id!r} matches no preceding tool "
                                  f"call{known}", f"{where}.tool_call_id", number)
            if turn.tool_call_id is None and not calls_seen:
                raise TurnProblem(f"turn {number}: a tool message with no preceding tool call",
                                  f"{where}.role", number)
        if turn.tool_calls and turn.role != "assistant":
            raise TurnProblem(f"turn {number}: only assistant turns make tool calls", f"{where}.tool_calls", number)
        for call in turn.tool_calls:
            calls_seen = True
            if call.id:
                call_ids.add(call.id)
        if turn.index is not None:
            if previous_index is not None and turn.index <= previous_index[1]:
                raise TurnProblem(f"turn {number}: index {turn.index} does not come after turn {previous_index[0]}'s "
                                  f"index {previous_index[1]} (turns out of order)", f"{where}.index", number)
            previous_index = (number, turn.index)
        if turn.timestamp:
            moment = _parse_time(turn.timestamp, f"{where}.timestamp", number)
            if previous_time is not None and moment < previous_time[1]:
                raise TurnProblem(f"turn {number}: timestamp {turn.timestamp} is earlier than turn {previous_time[0]}'s "
                                  f"(turns out of order)", f"{where}.timestamp", number)
            previous_time = (number, moment)


def is_conversation_record(record: dict[str, Any]) -> bool:
    """A record is a conversation when it holds a list of messages under turns, messages or Ragas's user_input."""
    return any(isinstance(record.get(key), list) for key in TURN_KEYS)


def conversation_from_record(record: dict[str, Any]) -> Conversation:
    """Our shape, OpenAI `messages` or Ragas MultiTurnSample → Conversation (pydantic errors name the field)."""
    data = dict(record)
    key = next(k for k in TURN_KEYS if isinstance(data.get(k), list))
    data["turns"] = data.pop(key)
    # Ragas: `reference` is the expected outcome of the whole conversation.
    if "reference" in data and "reference_outcome" not in data:
        data["reference_outcome"] = data.pop("reference")
    known = set(Conversation.model_fields)
    extra = {k: v for k, v in data.items() if k not in known}
    data = {k: v for k, v in data.items() if k in known}
    if extra:
        data["metadata"] = {**extra, **(data.get("metadata") or {})}
    return Conversation.model_validate(data)


def turns_key(record: dict[str, Any]) -> str:
    return next((k for k in TURN_KEYS if isinstance(record.get(k), list)), "turns")
