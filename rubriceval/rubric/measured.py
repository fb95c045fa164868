"""What a rubric's `measured:` block says: how well a judge agreed with people on labelled data, per judge mode.

It is metadata about the rubric, not part of it: the judge never sees it and it is left out of the content hash, so
recording a new measurement keeps the version's audits and cached replies. `rubriceval validate` checks the block
(an interval that holds the figure, a data set that exists) and warns when the declared `judge_mode` is not the mode
measured best on that judge; reports show the figures beside the rubric. How each figure was produced is written in
docs/benchmarks.md.
"""
from __future__ import annotations

import datetime
from collections.abc import Collection
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from rubriceval.rubric.strict import StrictModel

Statistic = Literal["quadratic_kappa", "cohen_kappa", "spearman", "accuracy"]


class Measurement(StrictModel):
    judge: str                    # the judge's model name as JudgeConfig.model says it ("local": the embedded judge)
    mode: str                     # judge mode, with its few-shot setting where it matters ("holistic+per_level")
    kappa: float = Field(ge=-1, le=1)
    ci: tuple[float, float]       # 95 % bootstrap interval of the figure
    n: int = Field(ge=1)          # labelled items the figure is computed on
    dataset: str                  # the labelled data, a path relative to the repository
    date: datetime.date
    statistic: Statistic = "quadratic_kappa"
    note: str = ""

    @model_validator(mode="after")
    def _interval_holds_the_figure(self) -> Measurement:
        low, high = self.ci
        if not (-1 <= low <= high <= 1):
            raise ValueError(f"ci must be [low, high] within [-1, 1], got {list(self.ci)}")
        if not (low - 1e-9 <= self.kappa <= high + 1e-9):
            raise ValueError(f"kappa {self.kappa} lies outside its interval {list(self.ci)}")
        return self

    @property
    def base_mode(self) -> str:
        """The judge mode alone ("holistic+per_level" → "holistic")."""
        return self.mode.split("+", 1)[0]

    def line(self) -> str:
        return (f"{self.mode} on {self.judge}: κ {self.kappa:.2f} [{self.ci[0]:.2f}, {self.ci[1]:.2f}], "
                f"n={self.n} ({self.dataset}, {self.date.isoformat()})")


def best_measured(measured: list[Measurement], judge: str, modes: Collection[str] | None = None
                  ) -> Measurement | None:
    """The measurement that agreed best on this judge, among `modes` (base modes; None: any), or None when none
    names it. Best = the highest lower bound of the 95 % interval, then κ, then n: a κ 0.96 on 4 items with
    interval [0.00, 1.00] shows less than 0.70 [0.54, 0.83] on 22."""
    on_judge = [m for m in measured if m.judge == judge and (modes is None or m.base_mode in modes)]
    return max(on_judge, key=lambda m: (m.ci[0], m.kappa, m.n)) if on_judge else None


def measured_findings(measured: list[Measurement], judge_mode: str, rubric_file: str | None
                      ) -> list[tuple[str, str, str, int, str]]:
    """(severity, message, "measured", index, field) for `rubriceval validate`: a data set that cannot be found
    beside the rubric file or from the working directory, and a declared judge mode that a judge with
    measurements was never measured in (the shipped mode should be one that was measured)."""
    out: list[tuple[str, str, str, int, str]] = []
    folder = Path(rubric_file).resolve().parent if rubric_file else Path.cwd()
    for index, m in enumerate(measured):
        places = [folder / m.dataset, folder.parent / m.dataset, Path.cwd() / m.dataset]
        if not any(place.exists() for place in places):
            out.append(("warning", f"measured data set {m.dataset!r} not found (looked beside the rubric file, its "
                        "parent folder and the working directory)", "measured", index, "dataset"))
    for judge in dict.fromkeys(m.judge for m in measured):
        modes = [m.base_mode for m in measured if m.judge == judge]
        if judge_mode not in modes:
            first = next(i for i, m in enumerate(measured) if m.judge == judge)
            out.append(("warning", f"judge_mode {judge_mode!r} was never measured on judge {judge!r} (measured: "
                        f"{', '.join(dict.fromkeys(modes))}); ship a measured mode or measure this one",
                        "measured", first, "mode"))
    return out
