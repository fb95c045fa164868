"""first_turn: the first assistant turn mentions the greeting phrase(s) (您好|欢迎) — final_turn's check, mirrored."""
from __future__ import annotations

from rubriceval.checks.final_turn import turn_mentions
from rubriceval.checks.turns import conversation_of
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import FirstTurn


def first_turn(item: FirstTurn, sample: Sample) -> Evidence:
    first = conversation_of(sample).assistant_turns[0]
    return turn_mentions(item, sample, first, "ev_first_turn", "ev_first_turn_says")
