"""response_time (首响 / 回复超时): every agent reply within `max_seconds` of the customer's message it answers.

A reply is the first assistant turn with text after one or more customer turns; its delay runs from the first of
those customer turns (the message that has waited longest) to the reply, by the turns' timestamps (chat-log readers
keep one per turn: rubriceval/data/chatlog.py stores them in UTC). Tool and system turns, and assistant turns that
only call a tool, are not replies. `replies: first` times the first reply only (首响).

Each late reply is one occurrence (`late_replies`, read by a scorecard's `per: occurrence`), its evidence naming the
reply's turn, the customer's turn and the delay in seconds. A reply whose delay cannot be read (a turn without a
timestamp, or one that is not a date-time) leaves the check undecided (passed None) unless another reply is
late: a missing clock is never a pass."""
from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from rubriceval.checks.base import reworded, worded
from rubriceval.checks.turns import conversation_of, excerpt
from rubriceval.core.verdict import Evidence
from rubriceval.data.conversation import Conversation, Turn
from rubriceval.data.metadata import parse_moment
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.items import ResponseTime


class Reply(NamedTuple):
    asked: int               # the first customer turn (from 1) waiting for this reply
    turn: int                # the agent turn that replies
    delay: float | None      # seconds from `asked` to `turn`; None when a timestamp is missing or unreadable
    unreadable: int | None   # then: the turn whose timestamp is missing


def _is_reply(turn: Turn) -> bool:
    return turn.role == "assistant" and bool(turn.content.strip())


def replies(conversation: Conversation) -> list[Reply]:
    """Every agent reply to a waiting customer, in turn order, with its delay."""
    found: list[Reply] = []
    waiting: int | None = None
    for number, turn in conversation.numbered():
        if turn.role == "user":
            waiting = number if waiting is None else waiting
        elif _is_reply(turn) and waiting is not None:
            found.append(_timed(conversation, waiting, number))
            waiting = None
    return found


def _timed(conversation: Conversation, asked: int, reply: int) -> Reply:
    def moment(number: int) -> datetime | None:
        stamp = conversation.turns[number - 1].timestamp
        return parse_moment(stamp) if stamp else None

    asked_at, replied_at = moment(asked), moment(reply)
    if asked_at is None or replied_at is None:
        return Reply(asked, reply, None, asked if asked_at is None else reply)
    return Reply(asked, reply, (replied_at - asked_at).total_seconds(), None)


def seconds(value: float) -> int | float:
    """A delay as evidence says it: whole seconds as an integer (95, not 95.0)."""
    return int(value) if float(value).is_integer() else round(value, 1)


def _timed_replies(item: ResponseTime, conversation: Conversation) -> list[Reply]:
    found = replies(conversation)
    return found[:1] if item.replies == "first" else found


def _late(item: ResponseTime, reply: Reply) -> bool:
    return reply.delay is not None and reply.delay > item.max_seconds


def _late_evidence(item: ResponseTime, sample: Sample, conversation: Conversation, reply: Reply) -> Evidence:
    return Evidence(item=item.id, passed=False, turn=reply.turn, other_turn=reply.asked,
                    span=excerpt(conversation.turns[reply.turn - 1].content),
                    **worded(sample, "ev_response_time_late", turn=reply.turn, asked=reply.asked,
                             delay=seconds(reply.delay or 0), max=seconds(item.max_seconds)))


def late_replies(item: ResponseTime, sample: Sample) -> list[Evidence]:
    """Each late reply as its own evidence: the occurrences a scorecard counts with `per: occurrence`."""
    conversation = conversation_of(sample)
    return [_late_evidence(item, sample, conversation, r) for r in _timed_replies(item, conversation) if _late(item, r)]


def response_time(item: ResponseTime, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    timed = _timed_replies(item, conversation)
    late = [_late_evidence(item, sample, conversation, r) for r in timed if _late(item, r)]
    if len(late) == 1:
        return late[0]
    if late:
        message = msg("ev_response_time_late_many", first=late[0].message, n=len(late),
                      turns=[ev.turn for ev in late])
        return late[0].model_copy(update=reworded(sample, message))
    unknown = next((r for r in timed if r.delay is None), None)
    if unknown is not None:
        return Evidence(item=item.id, passed=None, turn=unknown.turn, other_turn=unknown.asked,
                        missing=[f"timestamp of turn {unknown.unreadable}"],
                        **worded(sample, "ev_response_time_unknown", turn=unknown.unreadable, reply=unknown.turn,
                                 asked=unknown.asked))
    if not timed:
        return Evidence(item=item.id, passed=True, **worded(sample, "ev_response_time_none"))
    slowest = max(timed, key=lambda r: r.delay or 0)
    return Evidence(item=item.id, passed=True, turn=slowest.turn, other_turn=slowest.asked,
                    **worded(sample, "ev_response_time_ok", n=len(timed), max=seconds(item.max_seconds),
                             turn=slowest.turn, delay=seconds(slowest.delay or 0)))
