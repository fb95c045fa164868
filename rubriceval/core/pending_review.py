"""A rubric verdict pending review (issue 44): the judge scored it, but its rubric states an `auto_accept` target and
the verdict is outside the region that reviews proved meets it, so it waits for a person.

The verdict keeps the judge's score and feedback (a score xor an unscored reason, as every verdict); this mark, kept
under `details["pending_review"]`, says only that the score is not decided yet. It is written by the run
(trust/rubric_selective.py) and read by the one official-score rule (audit/official.py): until a person's decision
(an audit, an adjudication, an accepted appeal) settles it, a pending verdict has no official score, is in no mean,
pass rate or gate figure, and is counted apart as pending."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

DETAILS_KEY = "pending_review"


class PendingReview(BaseModel):
    """Why the verdict waits: the judge its rubric's region was fitted for, and the verdict's confidence (None: the
    verdict carries none, its rubric is one band)."""

    judge: str = ""
    confidence: float | None = None

    def details(self) -> dict[str, Any]:
        """The entry of a verdict's details that marks it."""
        return {DETAILS_KEY: self.model_dump()}

    @classmethod
    def read(cls, details: Mapping[str, Any] | None) -> PendingReview | None:
        """The mark of a verdict's details, None when it is not pending (or the entry is not a mark)."""
        stored = (details or {}).get(DETAILS_KEY)
        if not isinstance(stored, dict):
            return None
        try:
            return cls.model_validate(stored)
        except ValidationError:
            return None
