"""final_turn: the last assistant turn mentions the closing phrase(s) — matched by must_mention itself, `match`
(entities, regex, a question about that turn) included.
`first_turn` (first_turn.py) is the same check on the first assistant turn, through `turn_mentions`."""
from __future__ import annotations

from rubriceval.checks.base import reworded
from rubriceval.checks.mention import must_mention
from rubriceval.checks.turns import conversation_of, excerpt, turn_sample
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.schema import FinalTurn, FirstTurn, MustMention


def turn_mentions(item: FinalTurn | FirstTurn, sample: Sample, turn: int, found: str, says: str) -> Evidence:
    """must_mention of the item's phrases on one turn (1-based), worded with the `found` / `says` messages."""
    conversation = conversation_of(sample)
    # `turns` only tells the model the question (match.ask) is about one turn: this one, passed as `at`.
    as_mention = MustMention(id=item.id, type="must_mention", phrases=item.phrases, mode=item.mode,
                             case_sensitive=item.case_sensitive, match=item.match, turns="assistant")
    evidence = must_mention(as_mention, turn_sample(conversation, turn), at=(conversation, turn))
    message = (msg(found, turn=turn, check=evidence.message) if evidence.passed else
               msg(says, turn=turn, check=evidence.message, said=excerpt(conversation.turns[turn - 1].content)))
    return evidence.model_copy(update={"turn": turn, **reworded(sample, message)})


def final_turn(item: FinalTurn, sample: Sample) -> Evidence:
    """The last assistant turn; with `last: N`, the first of the assistant's last N turns (latest first) that
    mentions the phrases — else the evidence of the very last one."""
    turns = conversation_of(sample).assistant_turns[-item.last:]
    evidence = None
    for turn in reversed(turns):
        found = turn_mentions(item, sample, turn, "ev_final_turn", "ev_final_turn_says")
        if found.passed:
            return found
        evidence = evidence or found
    assert evidence is not None          # a conversation has an assistant turn (data/conversation.py)
    return evidence
