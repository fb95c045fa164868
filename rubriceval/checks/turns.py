"""Shared helpers for conversation checks: find phrases turn by turn (with the single-turn matcher, so `a|b`
synonyms and full-width folding behave exactly as in must_mention) and view one turn as a single-turn sample."""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from rubriceval.checks.base import find_any, span_at
from rubriceval.data.conversation import Conversation
from rubriceval.data.sample import Sample
from rubriceval.i18n import Message, msg

EXCERPT_CHARS = 40


class TurnHit(NamedTuple):
    turn: int        # turn number, from 1
    start: int       # character offset in that turn's content
    span: str        # the quoted text


def conversation_of(sample: Sample) -> Conversation:
    if sample.conversation is None:
        raise ValueError(f"sample '{sample.id}' is not a conversation; conversation checks need turns "
                         "(rubriceval validate flags such rubrics)")
    return sample.conversation


def hit_in(text: str, alternatives: str, turn: int, case_sensitive: bool = False) -> TurnHit | None:
    found = find_any(text, alternatives, case_sensitive)
    return TurnHit(turn, found[0], span_at(text, found[0], len(found[1]))) if found else None


def turn_hits(conversation: Conversation, alternatives: str, roles: Iterable[str],
              case_sensitive: bool = False) -> list[TurnHit]:
    """The earliest match in each turn of these roles that has one, in turn order."""
    roles = set(roles)
    hits = (hit_in(t.content, alternatives, n, case_sensitive) for n, t in conversation.numbered() if t.role in roles)
    return [h for h in hits if h is not None]


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
