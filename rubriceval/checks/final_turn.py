"""final_turn: the last assistant turn mentions the closing phrase(s) — matched by must_mention itself."""
from __future__ import annotations

from rubriceval.checks.base import reworded
from rubriceval.checks.mention import must_mention
from rubriceval.checks.turns import conversation_of, excerpt, turn_sample
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.schema import FinalTurn, MustMention
from rubriceval.scoring.verdict import Evidence


def final_turn(item: FinalTurn, sample: Sample) -> Evidence:
    conversation = conversation_of(sample)
    last = conversation.assistant_turns[-1]
    as_mention = MustMention(id=item.id, type="must_mention", phrases=item.phrases, mode=item.mode,
                             case_sensitive=item.case_sensitive)
    evidence = must_mention(as_mention, turn_sample(conversation, last))
    message = (msg("ev_final_turn", turn=last, check=evidence.message) if evidence.passed else
               msg("ev_final_turn_says", turn=last, check=evidence.message,
                   said=excerpt(conversation.turns[last - 1].content)))
    return evidence.model_copy(update={"turn": last, **reworded(sample, message)})
