"""Regression checks against a baseline run, each scorer on its own scale.

    regression:<scorer> >= -0.5     that scorer's paired mean delta, on its own scale (points of a 1–5 rubric, a
                                    0–1 metric's units)
    regression >= -0.1              every shared scorer, the delta as a fraction of its range (a 1–5 rubric's range
                                    is 4 points, a 0–1 metric's 1): -0.1 allows -0.4 points on a rubric and -0.1 on
                                    a metric, so one number means the same drop for both
    significant_regression[:<scorer>] >= X
                                    the same, but fails only when the drop also is significant: the paired 95%
                                    bootstrap CI of the delta lies wholly below 0 (a drop whose CI includes 0 passes,
                                    saying so)
"""
from __future__ import annotations

from rubriceval.report.compare_models import PairedDelta

REGRESSION_STATS = ("regression", "significant_regression")
RANGES = {"rubric": (1.0, 5.0), "metric": (0.0, 1.0)}


def scale(delta: PairedDelta, per_scorer: bool) -> float:
    """What one unit of the check's value is worth in the scorer's own units: 1 for a per-scorer check, else the
    scorer's range (the check's value is then a fraction of it)."""
    if per_scorer:
        return 1.0
    low, high = RANGES[delta.kind]
    return high - low


def scaled(value: float | None, delta: PairedDelta, per_scorer: bool) -> float | None:
    return None if value is None else value / scale(delta, per_scorer)


def regression_note(delta: PairedDelta, per_scorer: bool) -> str:
    """The delta as the reason shows it: in the scorer's units, and as the fraction compared when scaled."""
    if delta.delta is None:
        return ""
    low, high = RANGES[delta.kind]
    note = "" if per_scorer else f" (Δ {delta.delta:+.3g} on {low:g}–{high:g})"
    if delta.ci_low is not None:
        note += f" (95% CI [{delta.ci_low:+.3f}, {delta.ci_high:+.3f}], n={delta.n_paired})"
    return note


def significance(delta: PairedDelta) -> tuple[bool, str]:
    """(the drop is significant, why): the paired CI lies wholly below 0."""
    if delta.ci_low is None or delta.ci_high is None:
        return False, f"no confidence interval (n={delta.n_paired} paired): not shown significant"
    if delta.ci_high < 0:
        return True, "significant: the 95% CI excludes 0"
    return False, "not significant: the 95% CI includes 0"
