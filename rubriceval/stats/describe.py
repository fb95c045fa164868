"""Descriptive statistics of scored values (mean, median, std, pass rate), for reports, segments and trends alike.
A statistic that cannot be computed is None with a note saying why, never NaN."""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pydantic import BaseModel, Field


class Stats(BaseModel):
    """Descriptive statistics of scored rows; `None` values come with a note."""

    n_scored: int = 0
    mean: float | None = None
    median: float | None = None
    std: float | None = None          # sample standard deviation (n − 1)
    min: float | None = None
    max: float | None = None
    n_passed: int | None = None
    pass_rate: float | None = None
    notes: list[str] = Field(default_factory=list)


def checked_finite(value: float) -> float:
    # Inputs are validated finite scores, so this only guards arithmetic surprises (e.g. overflow).
    if not math.isfinite(value):
        raise ValueError(f"non-finite aggregate {value}")
    return value


def describe(scores: Sequence[float], threshold: float | None) -> Stats:
    """mean / median / std / pass rate of scored values; undefined statistics are None with a note."""
    stats = Stats(n_scored=len(scores))
    if not scores:
        stats.notes.append("no scored rows: mean, median and pass rate are undefined")
        return stats
    stats.mean = checked_finite(statistics.fmean(scores))
    stats.median = checked_finite(statistics.median(scores))
    stats.min, stats.max = min(scores), max(scores)
    if len(scores) >= 2:
        stats.std = checked_finite(statistics.stdev(scores))
    else:
        stats.notes.append("std needs at least two scored rows")
    if threshold is None:
        stats.notes.append("no threshold: pass rate is undefined")
    else:
        stats.n_passed = sum(1 for s in scores if s >= threshold)
        stats.pass_rate = stats.n_passed / len(scores)
    return stats
