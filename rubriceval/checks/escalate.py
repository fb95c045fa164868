"""escalate_after: after N consecutive failed bot turns, a handover to a human must follow within the next bot
turn(s). A bot turn failed when it matches `bot_failure`, or when the user's next turn matches `user_failure`
(还是不行|没用). A handover turn ends the streak. A conversation that ends while a handover is owed fails.

Each of bot_failure, user_failure and handover is literal phrases or a predicate (entities, regex, a per-turn
question). A handover question is asked only while failures are pending (a handover then changes the outcome); the
check returns at the turn that decides it."""
from __future__ import annotations

from rubriceval.checks.base import worded
from rubriceval.checks.before import described, missing_of
from rubriceval.checks.predicates import said, turn_match
from rubriceval.checks.turns import conversation_of, excerpt
from rubriceval.core.verdict import Evidence
from rubriceval.data.conversation import Conversation
from rubriceval.data.sample import Sample
from rubriceval.i18n import Message, msg
from rubriceval.rubric.predicate import as_predicate
from rubriceval.rubric.schema import EscalateAfter


def _failed(item: EscalateAfter, conversation: Conversation, number: int) -> Message | None:
    """Why bot turn `number` counts as failed ('turn 3: “无法”', 'user at turn 4: “还是不行”'), or None."""
    cs = item.case_sensitive
    if item.bot_failure and (hit := turn_match(as_predicate(item.bot_failure), conversation, number, cs)):
        return msg("ev_failed_bot_turn", turn=number, span=said(hit))
    if item.user_failure:
        for later, reply in conversation.numbered()[number:]:
            if reply.role == "assistant":
                break
            if reply.role == "user" and (hit := turn_match(as_predicate(item.user_failure), conversation, later, cs)):
                return msg("ev_failed_user_turn", turn=later, span=said(hit))
    return None


def escalate_after(item: EscalateAfter, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    streak: list[Message] = []      # why each bot turn of the current run of failures failed
    owed_since: int | None = None   # the bot turn after which a handover became due
    left = 0                        # bot turns still allowed before the handover
    handed_over = None
    handover_p = as_predicate(item.handover)
    for number in conversation.assistant_turns:
        content = conversation.turns[number - 1].content
        handover = turn_match(handover_p, conversation, number, item.case_sensitive,
                              ask=bool(streak) or owed_since is not None)
        if handover:
            if owed_since is not None:
                return Evidence(item=item.id, passed=True, turn=number, span=handover.span, start=handover.start,
                                **worded(sample, "ev_escalate_ok", failures=item.failures, streak=streak,
                                         turn=number))
            handed_over = handed_over or handover
            streak, owed_since = [], None
            continue
        if owed_since is not None:
            left -= 1
            if left == 0:
                return Evidence(item=item.id, passed=False, turn=number, span=excerpt(content), missing=[missing_of(item.handover)],
                                **worded(sample, "ev_escalate_missed", failures=item.failures, streak=streak,
                                         turn=number, handover=described(item.handover)))
        why = _failed(item, conversation, number)
        streak = streak + [why] if why else []
        if why and len(streak) >= item.failures and owed_since is None:
            owed_since, left = number, item.within
    if owed_since is not None:
        return Evidence(item=item.id, passed=False, missing=[missing_of(item.handover)], turn=owed_since,
                        **worded(sample, "ev_escalate_ended", failures=item.failures, streak=streak,
                                 handover=described(item.handover)))
    if handed_over is not None:
        return Evidence(item=item.id, passed=True, turn=handed_over.turn, span=handed_over.span,
                        start=handed_over.start,
                        **worded(sample, "ev_escalate_early", turn=handed_over.turn, failures=item.failures))
    return Evidence(item=item.id, passed=True, **worded(sample, "ev_escalate_never", failures=item.failures,
                                                        turns=list(conversation.assistant_turns)))
