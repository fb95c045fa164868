"""Conversation scripts for `rubriceval collect`: scripted user turns, or a user simulated by the judge model.

```yaml
conversations:                      # or the list itself at the top level
  - [你好, 我的订单 A1001 还没到, 那帮我催一下]          # a bare list of user messages (id: script-1)
  - id: refund-flow
    user_turns: [我要退款, 订单号 A1001, 商品碎了]
    tags: [退款]
    reference_outcome: 为订单 A1001 提交退款       # kept for agent_goal_accuracy, as are
    reference_tool_calls: [{name: create_refund, arguments: {order_id: A1001}}]
    reference_topics: [退换货]
  - id: angry-customer
    simulated_user:
      persona: 等了一周快递的老顾客，着急，说话简短
      goal: 让客服查到订单 A1001 的物流，并给出送达时间或补偿
      stop_condition: 客服给出了送达时间或补偿方案，或明确表示无法处理   # the judge decides when it is met
      max_turns: 6                  # user messages at most
      first_message: 我的快递怎么还没到？   # optional; else the simulated user writes it
```

Every error names the file, the line and the field.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rubriceval.common.errors import DatasetError, RubricEvalError
from rubriceval.data.conversation import Conversation, Turn
from rubriceval.rubric.yaml_lines import line_for, load_yaml_with_lines


class SimulatedUser(BaseModel):
    model_config = ConfigDict(extra="forbid")

    persona: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    stop_condition: str = ""            # empty: the goal reached (or clearly out of reach) ends the conversation
    max_turns: int = Field(default=6, ge=1, le=50)
    first_message: str | None = None
    language: Literal["zh", "en"] | None = None   # None: zh when persona/goal hold CJK characters


class ConversationScript(Conversation):
    """A conversation before it happens: the conversation's own fields (id, tags, intent, reference_outcome,
    reference_tool_calls, reference_topics, metadata) with `user_turns` to send in order, or a `simulated_user`
    that writes them, instead of `turns` (those are collected)."""

    model_config = ConfigDict(extra="forbid")

    turns: list[Turn] = Field(default_factory=list, max_length=0)
    user_turns: list[str] = Field(default_factory=list)
    simulated_user: SimulatedUser | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_turns(cls, value: Any) -> Any:
        if isinstance(value, dict) and value.get("turns"):
            raise ValueError("a script gives user_turns (or a simulated_user); turns are what collect records")
        return value

    @model_validator(mode="after")
    def _coherent(self) -> ConversationScript:    # replaces Conversation's: a script has no turns yet
        if bool(self.user_turns) == (self.simulated_user is not None):
            raise ValueError("give either user_turns (a list of user messages) or simulated_user, not both or neither")
        if any(not t.strip() for t in self.user_turns):
            raise ValueError("user_turns holds an empty message")
        return self

    @property
    def kind(self) -> str:
        return "simulated" if self.simulated_user is not None else "scripted"

    def conversation(self, turns: list[Turn], metadata: dict[str, Any]) -> Conversation:
        """The collected conversation: this script's fields with the turns that happened."""
        fields = self.model_dump(include=set(Conversation.model_fields) - {"turns", "metadata"})
        return Conversation(**fields, turns=turns, metadata=metadata)

    def fingerprint(self) -> str:
        """Changes when anything that decides the transcript changes: a resumed run redoes such conversations."""
        payload = self.model_dump(mode="json", exclude={"metadata", "turns"})
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def _entries(data: Any) -> tuple[list[Any], tuple[Any, ...]]:
    if isinstance(data, dict) and "conversations" in data:
        return data["conversations"], ("conversations",)
    return data, ()


def load_scripts(path: str | Path) -> list[ConversationScript]:
    """The conversations of a script file, in file order; ids unique (a bare list gets id script-N)."""
    path = Path(path)
    try:
        data, lines = load_yaml_with_lines(path)
    except RubricEvalError as exc:   # the YAML reader speaks of rubrics; this is a collect script
        raise DatasetError(exc.message, file=exc.file, line=exc.line, field=exc.field, hint=exc.hint) from None
    entries, prefix = _entries(data)
    if not isinstance(entries, list) or not entries:
        raise DatasetError("a conversation script is a non-empty list of conversations", file=str(path),
                           line=line_for(lines, prefix), field=".".join(prefix) or None,
                           hint="e.g. conversations: [[你好, 我要退款]]  or  - {id: c1, user_turns: [...]}")
    scripts: list[ConversationScript] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        where = (*prefix, index)
        record = {"id": f"script-{index + 1}", "user_turns": entry} if isinstance(entry, list) else entry
        if isinstance(record, dict) and "id" not in record:
            record = {"id": f"script-{index + 1}", **record}
        try:
            script = ConversationScript.model_validate(record)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = tuple(err["loc"]) if isinstance(entry, dict) else ()
            raise DatasetError(err["msg"], file=str(path), line=line_for(lines, (*where, *loc)),
                               field=".".join(str(p) for p in (*where, *loc))) from None
        if script.id in seen:
            raise DatasetError(f"conversation id {script.id!r} is used twice (first at entry {seen[script.id] + 1})",
                               file=str(path), line=line_for(lines, (*where, "id")),
                               field=".".join(str(p) for p in (*where, "id")))
        seen[script.id] = index
        scripts.append(script)
    return scripts
