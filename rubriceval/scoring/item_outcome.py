"""One judge item's outcome (a score with feedback, or unscored with kind and reason) and how a 1–5 verdict reply is
read: shared by the holistic, checklist and conversation scorers."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Evidence, UnscoredKind, Usage
from rubriceval.judge.ask import Asked, Reading
from rubriceval.judge.parser import ParsedOutput, parse_judge_output
from rubriceval.rubric.schema import ChecklistItem, JudgeItem
from rubriceval.scoring.score_probs import (
    ScoreDistribution,
    score_distribution,
)


class ReadVerdict(ParsedOutput):
    """A reply read as a score, with P(level) at its score token when the reply carried logprobs."""

    score_probs: ScoreDistribution | None = None


def read_verdict(reply) -> Reading[ReadVerdict]:
    """A score with feedback from a free-text or JSON reply (`rubriceval.judge.parser`), or why there is none."""
    parsed = parse_judge_output(reply.text or "", data=reply.data)
    if parsed.score is None:
        return Reading(problems=[parsed.error or "no score"], kind="parse_error", feedback=parsed.feedback)
    probs = score_distribution(getattr(reply, "logprobs", None), parsed.score)
    return Reading(value=ReadVerdict(**parsed.model_dump(), score_probs=probs), feedback=parsed.feedback)


class JudgeItemOutcome(BaseModel):
    """One rubric judge item's outcome: a score with feedback, or unscored with the kind and reason (a scorecard
    item's hit or clear is scorecard's CardItemOutcome)."""

    item: JudgeItem | ChecklistItem
    score: int | None = None
    feedback: str = ""
    unscored_kind: UnscoredKind | None = None
    reason: str | None = None
    usage: Usage
    raw: str | None = None
    # Conversation rubrics (scope assistant_turn): one evidence entry per judged turn, and how they were judged.
    turn_evidence: list[Evidence] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    score_probs: ScoreDistribution | None = None      # holistic items with logprobs (rubriceval/scoring/score_probs.py)

    @classmethod
    def from_asked(cls, item: JudgeItem, asked: Asked) -> JudgeItemOutcome:
        reason = asked.reason
        if asked.unscored_kind == "parse_error":
            reason = f"{asked.problems[0]} (after {asked.attempts} judge repl{'y' if asked.attempts == 1 else 'ies'})"
        return cls(item=item, score=asked.value.score if asked.ok and asked.value is not None else None,
                   feedback=asked.feedback,
                   unscored_kind=asked.unscored_kind, reason=reason, usage=asked.usage, raw=asked.raw,
                   score_probs=getattr(asked.value, "score_probs", None) if asked.ok else None)
