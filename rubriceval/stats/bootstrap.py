"""Bootstrap intervals shared by compare, pairwise and trend statistics."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

BOOTSTRAP_CELLS_PER_BATCH = 2_000_000   # bounds memory: replicates × paired samples per batch


def paired_bootstrap_ci(diffs: Sequence[float] | npt.NDArray[np.float64], n_boot: int = 2000, seed: int = 0,
                        confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile interval of the mean paired difference, resampling samples (pairs) with replacement."""
    d = np.asarray(diffs, dtype=float)
    n = len(d)
    if n < 2 or n_boot < 1:
        return None, None
    rng = np.random.default_rng(seed)
    batch = max(1, BOOTSTRAP_CELLS_PER_BATCH // n)
    means = []
    remaining = n_boot
    while remaining > 0:
        size = min(batch, remaining)
        means.append(d[rng.integers(0, n, size=(size, n))].mean(axis=1))
        remaining -= size
    replicates = np.concatenate(means)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(replicates, [alpha, 1 - alpha])
    return float(low), float(high)
