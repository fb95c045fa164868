"""A user played by the judge model: from a persona, a goal and a stop condition, the next message or "stop".

One judge call per user turn (through `rubriceval.judge.ask`, one re-ask when the answer breaks its schema), seeing
the conversation so far from the user's side: user and bot messages only — tool calls, tool results and retrieved
contexts are the bot's internals. Prompts: `templates/<lang>/simulate_user.j2`. With the judge's cache on, the
same conversation so far gets the same next message, so a resumed or repeated collection is reproducible.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rubriceval.collect.scripts import SimulatedUser
from rubriceval.core.verdict import Usage
from rubriceval.data.conversation import Turn
from rubriceval.judge.ask import Judge, JudgeRequest, TemplateReask, ask, json_reader
from rubriceval.prompt.environment import prompt_environment, render_messages

TEMPLATES = Path(__file__).resolve().parent / "templates"
MOVE_SCHEMA: dict = {"type": "object", "additionalProperties": False, "required": ["reason", "stop", "message"],
                     "properties": {"reason": {"type": "string"}, "stop": {"type": "boolean"},
                                    "message": {"type": "string"}}}
CALL_VERSION = "1"


class UserMove(BaseModel):
    stop: bool
    message: str
    reason: str


class SimulationFailed(Exception):
    """The judge gave no usable move (provider error, unreadable answer after the re-ask, prompt too long)."""

    def __init__(self, kind: str, reason: str):
        super().__init__(f"{kind}: {reason}")
        self.kind = kind


def language_of(user: SimulatedUser) -> str:
    if user.language:
        return user.language
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in user.persona + user.goal) else "en"


def _reader(first: bool):
    def check(data: dict) -> tuple[UserMove | None, list[str]]:
        problems = [f"{key}: missing or of the wrong type" for key, kind in (("reason", str), ("stop", bool),
                                                                             ("message", str))
                    if not isinstance(data.get(key), kind)]
        if problems:
            return None, problems
        move = UserMove(stop=data["stop"] and not first, message=data["message"].strip(), reason=data["reason"])
        if not move.stop and not move.message:
            return None, ["message is empty but stop is false: write the user's next message"]
        return move, []
    return json_reader(check)


def move_request(user: SimulatedUser, turns: list[Turn]) -> JudgeRequest:
    seen = [t for t in turns if t.role in ("user", "assistant") and t.content.strip()]
    messages = render_messages(prompt_environment(TEMPLATES), language_of(user), "simulate_user",
                               persona=user.persona, goal=user.goal, stop_condition=user.stop_condition, turns=seen)
    return JudgeRequest(messages=messages, json_schema=MOVE_SCHEMA, schema_name="simulate_user",
                        cache_tag=f"collect/simulate_user/v{CALL_VERSION}")


async def next_move(judge: Judge, user: SimulatedUser, turns: list[Turn]) -> tuple[UserMove, Usage]:
    """The simulated user's next move given the conversation so far (no turns: the opening message, never stop)."""
    env = prompt_environment(TEMPLATES)
    config: Any = getattr(judge, "config", None)
    asked = await ask(judge, move_request(user, turns), _reader(first=not turns),
                      reask=TemplateReask(template=env.get_template(f"{language_of(user)}/reask.j2")),
                      max_input_tokens=getattr(config, "max_input_tokens", None))
    if not asked.ok or asked.value is None:
        raise SimulationFailed(asked.unscored_kind or "error", asked.reason or "no usable answer")
    return asked.value, asked.usage
