"""Selective acceptance with a finite-sample guarantee (issue 44; "Trust or Escalate", ICLR 2025): accept a machine's
decisions only where their agreement with reviewers is at least `target` with probability ≥ `confidence`.

- `clopper_pearson_lower(k, n, confidence)`: the exact one-sided lower bound L of a binomial proportion after k
  successes in n trials — the L with P(X ≥ k | n, L) = 1 − confidence (the Beta(k, n − k + 1) quantile; 0 when
  k = 0). If the true agreement p is below L at most 1 − confidence of the time, `L ≥ target` tests "p ≥ target" at
  that level. `clopper_pearson_upper` is the mirror bound.
- `fixed_sequence(confidences, agreements, target, confidence)`: the regions "machine confidence ≥ λ" for λ from
  the most confident reviewed decision down, tested in that order, each at the full level; the accepted region is
  the last λ whose bound reached the target before the first that did not (fixed-sequence testing controls the
  chance of accepting any region whose agreement is below target at 1 − confidence, whatever the number of steps).
  Steps whose region holds fewer reviewed decisions than `min_reviews(target, confidence)` are not tested: even
  perfect agreement could not pass them, and skipping them depends only on the confidences, never on the agreements.

Pure functions of counts (scipy's beta distribution; tests/stats/test_selective.py checks them against the binomial
sum itself)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import beta


def clopper_pearson_lower(k: int, n: int, confidence: float) -> float:
    """One-sided lower bound of the proportion at `confidence` after k of n (0.0 with no evidence)."""
    _check(k, n, confidence)
    if k == 0:
        return 0.0
    return float(beta.ppf(1 - confidence, k, n - k + 1))


def clopper_pearson_upper(k: int, n: int, confidence: float) -> float:
    """One-sided upper bound of the proportion at `confidence` after k of n (1.0 with no evidence)."""
    _check(k, n, confidence)
    if k == n:
        return 1.0
    return float(beta.ppf(confidence, k + 1, n - k))


def min_reviews(target: float, confidence: float) -> int:
    """The fewest reviewed decisions whose bound can reach `target` (all of them agreeing): the least n with
    target^n ≤ 1 − confidence (0.9 at 95 %: 29)."""
    if not 0 < target < 1:
        raise ValueError(f"target {target} must be between 0 and 1")
    n = max(1, math.ceil(math.log(1 - confidence) / math.log(target)))
    while clopper_pearson_lower(n, n, confidence) < target:     # float rounding at the boundary
        n += 1
    return n


@dataclass(frozen=True)
class SelectiveStep:
    """One tested region: machine confidence ≥ threshold."""

    threshold: float
    n: int                        # reviewed decisions in the region
    agreements: int
    lower_bound: float
    passed: bool


@dataclass(frozen=True)
class SelectiveFit:
    """The accepted region (threshold None: nothing accepted) and every step tested on the way to it."""

    threshold: float | None
    n: int                        # reviewed decisions in the accepted region
    agreements: int
    lower_bound: float | None     # the guaranteed agreement there (None: nothing accepted)
    n_reviewed: int               # reviewed decisions of every confidence
    steps: tuple[SelectiveStep, ...]

    @property
    def coverage(self) -> float:
        """The share of reviewed decisions inside the accepted region."""
        return self.n / self.n_reviewed if self.n_reviewed else 0.0


def fixed_sequence(confidences: Sequence[float], agreements: Sequence[bool], target: float,
                   confidence: float) -> SelectiveFit:
    """The largest region "confidence ≥ λ" passed by fixed-sequence testing (module doc); nothing when n = 0."""
    if len(confidences) != len(agreements):
        raise ValueError("one agreement per confidence")
    pairs = sorted(zip(confidences, agreements), key=lambda p: -p[0])
    needed = min_reviews(target, confidence)
    steps: list[SelectiveStep] = []
    accepted: SelectiveStep | None = None
    agreed = 0
    for index, (value, agrees) in enumerate(pairs):
        agreed += bool(agrees)
        if index + 1 < len(pairs) and pairs[index + 1][0] == value:
            continue                       # a region holds every decision at its threshold (ties together)
        n = index + 1
        if n < needed:
            continue
        bound = clopper_pearson_lower(agreed, n, confidence)
        step = SelectiveStep(threshold=float(value), n=n, agreements=agreed, lower_bound=bound,
                             passed=bound >= target)
        steps.append(step)
        if not step.passed:
            break
        accepted = step
    if accepted is None:
        return SelectiveFit(threshold=None, n=0, agreements=0, lower_bound=None, n_reviewed=len(pairs),
                            steps=tuple(steps))
    return SelectiveFit(threshold=accepted.threshold, n=accepted.n, agreements=accepted.agreements,
                        lower_bound=accepted.lower_bound, n_reviewed=len(pairs), steps=tuple(steps))


def _check(k: int, n: int, confidence: float) -> None:
    if not 0 <= k <= n:
        raise ValueError(f"{k} successes of {n}")
    if n == 0:
        return
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence} must be between 0 and 1")
