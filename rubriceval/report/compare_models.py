"""What a comparison of two runs holds: paired deltas with their bootstrap CI, changed samples, new unscored rows."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rubriceval.i18n import Lang
from rubriceval.pairwise.summary import PairwiseSummary

Direction = Literal["better", "worse", "unclear", "undefined"]


# A per-sample drop smaller than this is not listed as "worse": rubric scores are whole levels, and metric scores
# from LLM extraction wobble by a few hundredths between runs.
DEFAULT_MIN_DROP: dict[str, float] = {"rubric": 1.0, "metric": 0.05}


class PairedDelta(BaseModel):
    scorer: str
    name: str
    kind: Literal["rubric", "metric"]
    n_paired: int                    # samples scored in both runs
    n_only_a: int = 0                # scored only in the baseline run (unscored or absent in the candidate)
    n_only_b: int = 0
    # rubric verdicts pending review (issue 44) in the baseline / the candidate: in no pair, not "unscored"
    n_pending_a: int = 0
    n_pending_b: int = 0
    mean_a: float | None = None      # on the paired samples
    mean_b: float | None = None
    delta: float | None = None       # mean(b − a) over paired samples
    ci_low: float | None = None
    ci_high: float | None = None
    direction: Direction = "undefined"
    n_better: int = 0
    n_worse: int = 0
    n_same: int = 0
    version_a: str = ""
    version_b: str = ""
    note: str | None = None

    @property
    def version_changed(self) -> bool:
        return bool(self.version_a and self.version_b and self.version_a != self.version_b)


class SampleChange(BaseModel):
    sample_id: str
    scorer: str
    question: str = ""
    score_a: float
    score_b: float
    delta: float
    answer_a: str = ""
    answer_b: str = ""
    feedback_a: str = ""
    feedback_b: str = ""
    # Conversations: the first turn where each run's verdict failed (a check or a per-turn judge score).
    first_failing_turn_a: int | None = None
    first_failing_turn_b: int | None = None
    # Official scores: who decided a score that is a human decision ("appeal · qa_zhao"), in each run; "" the judge's
    decided_a: str = ""
    decided_b: str = ""

    @property
    def human(self) -> bool:
        return bool(self.decided_a or self.decided_b)


class NewUnscored(BaseModel):
    sample_id: str
    scorer: str
    question: str = ""
    score_a: float | None = None     # None: the pair did not exist in the baseline
    unscored_kind: str
    unscored_reason: str


class SeesawSample(BaseModel):
    sample_id: str
    question: str = ""
    better: dict[str, tuple[float, float]] = Field(default_factory=dict)   # scorer → (a, b)
    worse: dict[str, tuple[float, float]] = Field(default_factory=dict)
    human: list[str] = Field(default_factory=list)     # scorers whose official score here a human decided (a or b)


class Comparison(BaseModel):
    run_a: str                        # names
    run_b: str
    run_a_id: str
    run_b_id: str
    language: Lang
    deltas: list[PairedDelta]
    worse: dict[str, list[SampleChange]] = Field(default_factory=dict)       # scorer → samples that dropped
    new_unscored: list[NewUnscored] = Field(default_factory=list)
    # How many there are (the lists above show the first compare_source.LISTED of each on a large run).
    worse_total: dict[str, int] = Field(default_factory=dict)
    new_unscored_total: int = 0
    seesaw_total: int = 0
    seesaw_up: list[str] = Field(default_factory=list)    # scorers significantly better …
    seesaw_down: list[str] = Field(default_factory=list)  # … while these are significantly worse
    seesaw_samples: list[SeesawSample] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    pairwise: PairwiseSummary | None = None    # win rates of a stored pairwise comparison of the two runs
    n_boot: int
    seed: int
    confidence: float

    @property
    def seesaw(self) -> bool:
        return bool(self.seesaw_up and self.seesaw_down)

    def get(self, scorer: str) -> PairedDelta:
        for d in self.deltas:
            if d.scorer == scorer:
                return d
        matches = [d for d in self.deltas if d.name == scorer]
        if len(matches) == 1:
            return matches[0]
        raise KeyError(scorer)


PREVIEW_CHARS = 300


def direction_of(delta: float | None, low: float | None, high: float | None) -> Direction:
    if delta is None:
        return "undefined"
    if low is not None and low > 0:
        return "better"
    if high is not None and high < 0:
        return "worse"
    return "unclear"


def preview_answer(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS - 1] + "…"
