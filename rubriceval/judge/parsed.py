"""What the judge-reply parser returns: a score with feedback xor an error, a preference xor an error."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, model_validator


class ParsedOutput(BaseModel):
    """A judge reply read as a score (with feedback), or unscored with `error` saying why."""

    score: int | None = None
    feedback: str = ""
    error: str | None = None
    form: str = "none"     # which form gave the verdict: json, result_tag, zh_result, score_label, score_of,
    #                        zh_score, json_fragment, out_of — or "none" when no marker was found

    @model_validator(mode="after")
    def _scored_xor_error(self) -> ParsedOutput:
        if (self.score is None) == (self.error is None):
            raise ValueError("exactly one of score and error must be set")
        return self


class ParsedPreference(BaseModel):
    """A pairwise reply read as the preferred response ('A' or 'B', or 'tie' where allowed), or no winner with
    `error` saying why."""

    winner: Literal["A", "B", "tie"] | None = None
    feedback: str = ""
    error: str | None = None
    form: str = "none"     # result_tag, zh_result, response_tag, result_label — or "none"

    @model_validator(mode="after")
    def _winner_xor_error(self) -> ParsedPreference:
        if (self.winner is None) == (self.error is None):
            raise ValueError("exactly one of winner and error must be set")
        return self
