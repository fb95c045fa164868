"""The typed records of a pairwise A/B comparison: the versions compared, one judge reading per order, and the
pairwise verdict on one (sample, rubric, pair of versions)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from rubriceval.core.verdict import UnscoredKind, Usage

Choice = Literal["A", "B", "tie"]          # what the judge picked, as it saw the answers
Preferred = Literal["a", "b", "tie"]       # the same, as versions: a = the earlier version of the pair


class Version(BaseModel):
    """One bot version: a dataset file or a stored run, with the label reports use."""

    label: str = Field(min_length=1, pattern=r"^[^\s:]+$")
    kind: Literal["dataset", "run"]
    source: str                            # the dataset path, or the run's name
    run_id: str | None = None
    n_samples: int = 0


class OrderReading(BaseModel):
    """One of the two calls: which version was shown as Response A, and what the judge picked."""

    first: Literal["a", "b"]
    choice: Choice | None = None
    preferred: Preferred | None = None
    feedback: str = ""
    unscored_kind: UnscoredKind | None = None
    reason: str | None = None


class PairwiseVerdict(BaseModel):
    """Version a against version b on one sample and one rubric item, judged in both orders.

    `outcome` is the version both orders preferred, "tie" when both said tie or they disagree (position bias: a
    flip is a tie), or None — unscored, with the reason — when either order could not be read."""

    sample_id: str
    scorer: str                            # rubric id (rubric id/item id for a rubric with several judge items)
    scorer_version: str = ""
    version_a: str                         # labels
    version_b: str
    outcome: Preferred | None = None
    consistent: bool | None = None         # both orders named the same outcome
    unscored_kind: UnscoredKind | None = None
    unscored_reason: str | None = None
    orders: list[OrderReading] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    @model_validator(mode="after")
    def _outcome_xor_reason(self) -> PairwiseVerdict:
        if (self.outcome is None) == (self.unscored_reason is None):
            raise ValueError("a pairwise verdict has an outcome or says why not (unscored_reason), never both")
        if self.outcome is None and self.unscored_kind is None:
            self.unscored_kind = "error"
        return self

    @property
    def scored(self) -> bool:
        return self.outcome is not None
