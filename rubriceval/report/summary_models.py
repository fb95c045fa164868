"""What a run's aggregates look like: per rubric/metric statistics, unscored groups, tag/intent breakdowns and
the run summary (computed in aggregate.py; read by every report, comparison and gate)."""
from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, Field

from rubriceval.core.verdict import Usage
from rubriceval.stats.describe import Stats  # noqa: F401  (part of the summary's model)
from rubriceval.trust.panel_agreement import PanelAgreement

RUBRIC_LEVELS = (1, 2, 3, 4, 5)


class UnscoredGroup(BaseModel):
    """Unscored rows of one kind, with a few distinct reasons to show what went wrong."""

    kind: str
    count: int
    example_reasons: list[str] = Field(default_factory=list)
    sample_ids: list[str] = Field(default_factory=list)


class ScorerSummary(BaseModel):
    scorer: str                       # rubric id or metric name
    name: str                         # display name (the rubric's name; the metric name)
    kind: Literal["rubric", "metric"]
    version: str = ""
    threshold: float | None = None
    threshold_source: Literal["rubric", "config", "definition", "default", "none"] = "none"
    weight: float | None = None       # rubrics only: weight in the business score
    trust: dict[str, Any] | None = None   # the rubric's trust bar (min_kappa, min_items), if any
    n_total: int = 0                  # verdict rows, scored + unscored
    n_scored: int = 0
    n_unscored: int = 0
    unscored: list[UnscoredGroup] = Field(default_factory=list)
    # Answers that addressed the judge (rubriceval/safety/manipulation.py): scored under the rubric's policy, counted.
    n_suspected_manipulation: int = 0
    suspected_by_defence: dict[str, int] = Field(default_factory=dict)   # patterns, perplexity, llm_screen (issue 31)
    mean: float | None = None
    median: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    n_passed: int | None = None
    pass_rate: float | None = None
    distribution: dict[int, int] | None = None   # rubrics: count per level 1–5
    histogram: list[int] | None = None           # metrics: counts in [0,.2) [.2,.4) [.4,.6) [.6,.8) [.8,1]
    usage: Usage = Field(default_factory=Usage)
    panel: PanelAgreement | None = None          # rubrics judged by a judge panel: inter-judge agreement
    # Official scores (rubriceval/audit/official.py): the figures above are the official ones; of the rows, n_human
    # are human decisions, and the machine's (the judge's) figures are kept beside them when any is.
    n_human: int = 0
    machine_n_scored: int | None = None
    machine_mean: float | None = None
    machine_pass_rate: float | None = None
    n_corrected: int = 0      # rows whose sample was corrected after scoring, not recomputable (LLM metrics)
    # rubric verdicts pending review (issue 44: outside the rubric's auto_accept region, no person's decision yet):
    # scored by the judge, yet in none of the official figures above (n_scored, mean, pass rate): counted apart
    n_pending: int = 0
    notes: list[str] = Field(default_factory=list)

    @property
    def unscored_rate(self) -> float | None:
        return self.n_unscored / self.n_total if self.n_total else None


GroupDimension = Literal["tag", "intent"]
GroupKey = tuple[GroupDimension, str, str]        # (dimension, value, scorer) of a breakdown group


class GroupStats(BaseModel):
    """One scorer's results on the samples sharing one tag or one intent."""

    dimension: GroupDimension
    value: str
    scorer: str
    n_samples: int
    n_scored: int
    n_unscored: int
    mean: float | None
    pass_rate: float | None


class Summary(BaseModel):
    scorers: list[ScorerSummary]
    business_score: float | None = None        # weighted mean of rubric means, 1–5
    business_score_note: str | None = None
    business_rubrics: list[str] = Field(default_factory=list)   # rubric ids that went into the business score
    rag_scores: dict[str, float | None] = Field(default_factory=dict)   # metric → mean, beside the business score
    breakdown: list[GroupStats] = Field(default_factory=list)
    n_samples: int | None = None
    n_verdicts: int = 0
    n_unscored: int = 0
    usage: Usage = Field(default_factory=Usage)
    machine_only: bool = False                  # True: the judge's scores, human decisions left out (--machine-only)
    n_human_decided: int = 0                    # verdicts whose official score is a human decision
    machine_business_score: float | None = None  # the business score from the judge's scores, when they differ
    n_corrected: int = 0                        # verdicts scored before their sample's correction, not recomputed
    notes: list[str] = Field(default_factory=list)

    @property
    def rubrics(self) -> list[ScorerSummary]:
        return [s for s in self.scorers if s.kind == "rubric"]

    @property
    def metrics(self) -> list[ScorerSummary]:
        return [s for s in self.scorers if s.kind == "metric"]

    @property
    def unscored_rate(self) -> float | None:
        return self.n_unscored / self.n_verdicts if self.n_verdicts else None

    def get(self, scorer: str) -> ScorerSummary:
        """A scorer by id, or by display name (rubric names are often Chinese: '情绪安抚')."""
        for s in self.scorers:
            if s.scorer == scorer:
                return s
        matches = [s for s in self.scorers if s.name == scorer]
        if len(matches) == 1:
            return matches[0]
        raise KeyError(scorer)

    def to_pandas(self) -> pd.DataFrame:
        """One row per rubric/metric with the headline statistics (missing values are None, not NaN)."""
        rows = []
        for s in self.scorers:
            rows.append({
                "scorer": s.scorer, "name": s.name, "kind": s.kind, "version": s.version,
                "n_total": s.n_total, "n_scored": s.n_scored, "n_unscored": s.n_unscored,
                "n_suspected_manipulation": s.n_suspected_manipulation,
                "suspected_by_defence": dict(s.suspected_by_defence),
                "mean": s.mean, "median": s.median, "std": s.std, "min": s.min, "max": s.max,
                "threshold": s.threshold, "pass_rate": s.pass_rate, "weight": s.weight,
                "n_human": s.n_human, "machine_mean": s.machine_mean, "machine_pass_rate": s.machine_pass_rate,
                "unscored_by_kind": {g.kind: g.count for g in s.unscored},
                **({f"n_{level}": (s.distribution or {}).get(level) for level in RUBRIC_LEVELS}
                   if s.distribution is not None else {f"n_{level}": None for level in RUBRIC_LEVELS}),
                "calls": s.usage.calls, "prompt_tokens": s.usage.prompt_tokens,
                "completion_tokens": s.usage.completion_tokens, "cost_usd": s.usage.cost_usd,
                "notes": "; ".join(s.notes),
            })
        return pd.DataFrame(rows, dtype=object)
