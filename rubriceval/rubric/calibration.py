"""How a judgement item (a scorecard `question:` item or `applies_when.question`, a rubric checklist question) is
decided on one judge: the p(yes) cut-off fitted for that judge, the band of p(yes) where the judge cannot tell
(the item is then `undecided`, never a silent pass), how the fit was made and on how many items — and the
author's own yes/no examples per item (the 示例 a QA sheet carries), which anchor the cut-off and serve as few-shot.

Below both the rubric and the scorecard layers, so one model serves both (issue 39), and the review-fitted
calibrations of issue 44 are written into the same model (`method: reviews`). A calibration names the judge model it
was fitted for and is ignored with any other judge (`calibration_for`). Using these fields changes the item's
card or rubric version (they change verdicts)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field, model_serializer, model_validator

from rubriceval.rubric.strict import StrictModel

# labelled_set: fitted by rubriceval itself for one of its evidence kinds on labelled benchmark conversations
# (scoring/judgement/kind_calibration.py), not by the card's author or reviewers
CalibrationMethod = Literal["label_free", "examples", "reviews", "labelled_set"]


class ItemCalibration(StrictModel):
    """One item's decision rule on one judge: p(yes) ≥ cutoff is yes; p(yes) inside `undecided` (lo, hi) is
    undecided (the judge cannot tell there); `undecided: [0, 1]` says the item is undecidable on this judge.

    `score` says which number the cut-off is read on: `p_yes`, the judge's raw p(yes) of the item's question, or
    `turn_max`, the highest p(yes) over the turns a per-turn decomposition asked about (scoring/judgement/), or
    `checker`, a turn checker's stacked probability (scoring/judgement/turn_checker.py)."""

    judge: str = Field(min_length=1)           # the judge model it was fitted for (JudgeConfig.model)
    cutoff: float = Field(ge=0, le=1)
    undecided: tuple[float, float] | None = None
    method: CalibrationMethod
    n: int = Field(ge=0)                       # items the fit saw (anchors, examples or reviewed decisions)
    fitted_at: str | None = None               # ISO date-time of the fit
    score: Literal["p_yes", "turn_max", "checker"] = "p_yes"
    auc: float | None = Field(default=None, ge=0, le=1)    # how well the judge separated the fit's items
    note: str = ""

    @model_validator(mode="after")
    def _band(self) -> ItemCalibration:
        if self.undecided is not None:
            low, high = self.undecided
            if not 0 <= low <= high <= 1:
                raise ValueError(f"undecided must be [low, high] within [0, 1], got {list(self.undecided)}")
        return self

    @property
    def undecidable(self) -> bool:
        """The judge cannot tell this item at all: every p(yes) falls in the band."""
        return self.undecided is not None and self.undecided[0] <= 0 and self.undecided[1] >= 1

    def decide(self, p_yes: float) -> bool | None:
        """yes (True), no (False), or None when p(yes) falls in the undecided band."""
        if self.undecided is not None and self.undecided[0] <= p_yes <= self.undecided[1]:
            return None
        return p_yes >= self.cutoff


class ItemExample(StrictModel):
    """An author-written example of the item (示例): a turn or a short excerpt, and the answer it should get.
    `role`: whose words `text` is (客服 / 用户 …), when the example is one turn."""

    text: str = Field(min_length=1)
    answer: Literal["yes", "no"]
    role: Literal["user", "assistant"] | None = None
    note: str = ""

    @model_validator(mode="before")
    @classmethod
    def _yes_no(cls, data):
        """YAML reads an unquoted yes/no as a boolean; `{yes: "…"}` / `{no: "…"}` is the short form."""
        if isinstance(data, dict):
            data = dict(data)
            if isinstance(data.get("answer"), bool):
                data["answer"] = "yes" if data["answer"] else "no"
            for key, answer in ((True, "yes"), (False, "no"), ("yes", "yes"), ("no", "no")):
                if key in data and "text" not in data and isinstance(data[key], str):
                    data["text"], data["answer"] = data.pop(key), answer
        return data


def calibration_for(calibrations: Iterable[ItemCalibration] | None, judge_model: str | None
                    ) -> ItemCalibration | None:
    """The calibration fitted for this judge (the last one listed when several are), None for any other judge."""
    found = None
    for calibration in calibrations or []:
        if judge_model and calibration.judge == judge_model:
            found = calibration
    return found


class JudgementFields(StrictModel):
    """What a judgement item carries besides its question (mixed into a rubric checklist question, a scorecard item
    and a scorecard `applies_when`): the author's examples and the per-judge calibrations. Left out of the dump while
    empty, so every card and rubric written before keeps its content hash (version tag); used, they change it."""

    examples: list[ItemExample] = Field(default_factory=list)
    calibration: list[ItemCalibration] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_empty_judgement(self, handler):
        data = handler(self)
        if isinstance(data, dict):
            for name in ("examples", "calibration"):
                if not data.get(name):
                    data.pop(name, None)
        return data

    def calibration_for(self, judge_model: str | None) -> ItemCalibration | None:
        return calibration_for(self.calibration, judge_model)
