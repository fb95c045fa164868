"""A conversation rebuilt from the LLM calls of a production trace: each call sees the history again, so each adds
only what it has beyond the transcript so far, then its reply. Shared by the OpenTelemetry and Langfuse readers.

Turns are dicts in the shape `Turn` reads (role, content, tool_calls [{id, name, arguments}], tool_call_id,
contexts, timestamp); `sources` maps an assistant turn's number (from 1) to the ids of the span/observation that
said it, which the verdict exports parent their results to.
"""
from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from rubriceval.common.errors import DatasetError
from rubriceval.data import metadata as meta
from rubriceval.data.conversation import Conversation, TurnProblem


class Transcript:
    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []
        self._keys: list[str] = []
        self.sources: dict[str, dict[str, str]] = {}

    def extend(self, turns: list[dict[str, Any]], timestamp: str | None) -> None:
        """Add the turns of a call's input that the transcript does not end with already. The longest overlap
        between the transcript's end and the input's start is skipped: the whole history (a prefix) or a window of
        its last messages."""
        keys = [turn_key(t) for t in turns]
        overlap = next((k for k in range(min(len(keys), len(self._keys)), 0, -1) if keys[:k] == self._keys[-k:]), 0)
        for turn in turns[overlap:]:
            self.append(turn, timestamp)

    def append(self, turn: dict[str, Any], timestamp: str | None, source: dict[str, str] | None = None) -> None:
        if timestamp and not turn.get("timestamp"):
            turn["timestamp"] = timestamp
        self.turns.append(turn)
        self._keys.append(turn_key(turn))
        if source and turn["role"] == "assistant":
            self.sources[str(len(self.turns))] = source

    def conversation(self, conversation_id: str, metadata: dict[str, Any], *, file: str, line: int, field: str,
                     **fields: Any) -> Conversation:
        """The finished Conversation: the turns' sources and start/end times added to the metadata; a rule the
        transcript breaks (no bot reply, a tool result with no call …) is an error naming where it was read."""
        metadata[meta.SOURCE]["turns"] = self.sources
        metadata.update(meta.span_of_times([t.get("timestamp") for t in self.turns]))
        try:
            # validated from the turns as read (dicts), as the other readers' rows are
            return Conversation.model_validate({"id": conversation_id, "turns": self.turns, "metadata": metadata,
                                                **fields})
        except ValidationError as exc:
            err = exc.errors()[0]
            problem = (err.get("ctx") or {}).get("error")
            message = str(problem) if isinstance(problem, TurnProblem) else \
                f"{err['msg']} ({'.'.join(map(str, err['loc']))})"
            raise DatasetError(f"conversation '{conversation_id}': {message}", file=file, line=line,
                               field=field) from None

    def calls(self) -> set[str]:
        return {str(c.get("id")) for t in self.turns for c in t.get("tool_calls", []) if c.get("id")}

    def answered(self) -> set[str]:
        return {str(t["tool_call_id"]) for t in self.turns if t.get("tool_call_id")}

    def insert_result(self, call_id: str, content: str) -> None:
        """A tool result placed right after the turn that made the call (turn numbers after it shift by one)."""
        position = next((i + 1 for i, t in enumerate(self.turns)
                         if any(str(c.get("id")) == call_id for c in t.get("tool_calls", []))), len(self.turns))
        turn = {"role": "tool", "tool_call_id": call_id, "content": content,
                "timestamp": self.turns[position - 1].get("timestamp") if position else None}
        self.turns.insert(position, turn)
        self._keys.insert(position, turn_key(turn))
        self.sources = {str(int(n) + (int(n) > position)): ref for n, ref in self.sources.items()}


def turn_key(turn: dict[str, Any]) -> str:
    """What makes two turns the same message when a later call repeats the history."""
    return json.dumps([turn["role"], turn.get("content", ""), turn.get("tool_call_id"),
                       [c.get("id") or c.get("name") for c in turn.get("tool_calls", [])]], ensure_ascii=False,
                      default=str)


def arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: JSON text parsed, anything else kept under 'value'."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            return {"value": value}
    if isinstance(value, dict):
        return value
    return {} if value is None else {"value": value}


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
