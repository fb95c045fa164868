"""Statistics of independent groups (periods of different conversations): a proportion's Wilson interval, and the
difference of two groups' means with an unpaired test — a seeded permutation test on small groups, Welch's t-test
on large ones (where the permutation distribution is normal and resampling every row would cost minutes).

The interval of one group's mean is the percentile bootstrap of stats/bootstrap.py (the mean of the values, resampled
with replacement): one implementation for every bootstrap of a mean.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel
from scipy import stats as scipy_stats

from rubriceval.stats.bootstrap import BOOTSTRAP_CELLS_PER_BATCH

Z95 = 1.959963984540054
PERMUTATION_MAX_ROWS = 5000       # both groups together; above it Welch's t-test


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float | None, float | None]:
    """Wilson score interval of a proportion (good at small n and near 0 or 1, where the normal one is not)."""
    if n <= 0:
        return None, None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


class Difference(BaseModel):
    """b − a of two independent groups' means, with its test; `p_value is None` ⇔ not testable (`note` says why)."""

    delta: float | None = None
    p_value: float | None = None
    test: str = ""                    # "permutation (2000)" or "Welch t"
    note: str | None = None

    def beyond_noise(self, alpha: float = 0.05) -> bool | None:
        return None if self.p_value is None else self.p_value < alpha


def mean_difference(a: Sequence[float], b: Sequence[float], *, n_permutations: int = 2000,
                    seed: int = 0) -> Difference:
    """Two-sided test that groups a and b have the same mean (unpaired: they hold different samples)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0 or len(y) == 0:
        return Difference(note="a period without scored rows")
    delta = float(y.mean() - x.mean())
    if len(x) < 2 or len(y) < 2:
        return Difference(delta=delta, note="fewer than 2 scored rows in a period: no test")
    if len(x) + len(y) <= PERMUTATION_MAX_ROWS and n_permutations > 0:
        return Difference(delta=delta, p_value=_permutation_p(x, y, delta, n_permutations, seed),
                          test=f"permutation ({n_permutations})")
    if x.var() == 0 and y.var() == 0:
        return Difference(delta=delta, p_value=1.0 if delta == 0 else 0.0, test="Welch t (constant groups)")
    result = scipy_stats.ttest_ind(x, y, equal_var=False)
    return Difference(delta=delta, p_value=float(result.pvalue), test="Welch t")


def _permutation_p(x: np.ndarray, y: np.ndarray, delta: float, n_permutations: int, seed: int) -> float:
    """Share of label shuffles whose |mean difference| reaches the observed one (+1 smoothing, never 0)."""
    pooled = np.concatenate([x, y])
    n, n_y = len(pooled), len(y)
    rng = np.random.default_rng(seed)
    batch = max(1, BOOTSTRAP_CELLS_PER_BATCH // n)
    extreme, done = 0, 0
    total = pooled.sum()
    while done < n_permutations:
        size = min(batch, n_permutations - done)
        order = rng.permuted(np.tile(np.arange(n), (size, 1)), axis=1)
        y_sum = pooled[order[:, :n_y]].sum(axis=1)
        diffs = y_sum / n_y - (total - y_sum) / (n - n_y)
        extreme += int(np.sum(np.abs(diffs) >= abs(delta) - 1e-12))
        done += size
    return (extreme + 1) / (n_permutations + 1)
