"""Shared helpers for conversation checks: the conversation of a sample, one turn viewed as a single-turn sample,
excerpts and role names. Phrases are found turn by turn by checks/predicates.py."""
from __future__ import annotations

from collections.abc import Iterable

from rubriceval.data.conversation import Conversation
from rubriceval.data.sample import Sample
from rubriceval.i18n import Message, msg

EXCERPT_CHARS = 40


def conversation_of(sample: Sample) -> Conversation:
    if sample.conversation is None:
        raise ValueError(f"sample '{sample.id}' is not a conversation; conversation checks need turns "
                         "(rubriceval validate flags such rubrics)")
    return sample.conversation


def turn_sample(conversation: Conversation, number: int) -> Sample:
    """Turn `number` as a single-turn sample: answer = the turn, contexts = its contexts, question = the latest user
    turn before it — so every single-turn check runs on it unchanged."""
    turn = conversation.turns[number - 1]
    asked = next((t.content for t in reversed(conversation.turns[:number - 1]) if t.role == "user"), "")
    return Sample(id=f"{conversation.id}#{number}", question=asked, answer=turn.content, contexts=turn.contexts)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def role_names(roles: Iterable[str]) -> Message:
    """'assistant' / 'user' / both, as the catalogue says them (客服 / 用户)."""
    names = [msg(f"ev_role_{role}") for role in roles]
    return names[0] if len(names) == 1 else msg("ev_either", first=names[0], second=names[1])
