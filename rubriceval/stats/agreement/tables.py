"""Agreement statistics computed from K×K contingency tables, vectorised over a leading batch axis.

T[b, h, j] = count(human = h-th value, judge = j-th value). Why the bootstrap is cheap: every paired statistic is a
function of the table alone, and resampling n items with replacement is the same as drawing that table from
Multinomial(n, observed cell shares). So one replicate costs O(K²) instead of O(n), and all replicates are computed
as one (n_boot, K, K) array. NaN marks an undefined value (0/0).
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from rubriceval.stats.agreement.estimate import AgreementInputError

KappaWeights = Literal["quadratic", "linear", "unweighted"]


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def kappa_disagreement_weights(k: int, weights: KappaWeights) -> np.ndarray:
    """Disagreement weights w[h, j] ∈ [0, 1], by distance on the scale (not by index among observed labels)."""
    idx = np.arange(k)
    distance = np.abs(idx[:, None] - idx[None, :]).astype(float)
    if weights == "quadratic":
        return (distance / max(k - 1, 1)) ** 2
    if weights == "linear":
        return distance / max(k - 1, 1)
    if weights == "unweighted":
        return (distance > 0).astype(float)
    raise AgreementInputError(f"unknown kappa weights '{weights}'", hint="use quadratic, linear or unweighted")


def table_kappa(tables: np.ndarray, weights: KappaWeights) -> np.ndarray:
    """Cohen's kappa = 1 − Σ w·observed / Σ w·expected-by-chance."""
    w = kappa_disagreement_weights(tables.shape[-1], weights)
    n = tables.sum(axis=(1, 2))
    human_margin = tables.sum(axis=2)
    judge_margin = tables.sum(axis=1)
    expected = human_margin[:, :, None] * judge_margin[:, None, :] / np.where(n == 0, 1, n)[:, None, None]
    observed_disagreement = (w * tables).sum(axis=(1, 2))
    expected_disagreement = (w * expected).sum(axis=(1, 2))
    # Expected disagreement is 0 only when both raters put everything in one and the same category: 0/0.
    return 1 - safe_divide(observed_disagreement, np.where(expected_disagreement < 1e-12, 0, expected_disagreement))


def _midranks(margin: np.ndarray) -> np.ndarray:
    """Average rank of each category given its counts (ties share the mean of their ranks), shape (B, K)."""
    before = np.cumsum(margin, axis=1) - margin
    return before + (margin + 1) / 2


def table_spearman(tables: np.ndarray) -> np.ndarray:
    """Spearman's rho = Pearson correlation of midranks, weighted by cell counts (equals scipy.stats.spearmanr)."""
    n = tables.sum(axis=(1, 2))
    human_margin = tables.sum(axis=2)
    judge_margin = tables.sum(axis=1)
    mean_rank = ((n + 1) / 2)[:, None]
    human_dev = _midranks(human_margin) - mean_rank
    judge_dev = _midranks(judge_margin) - mean_rank
    cov = np.einsum("bhj,bh,bj->b", tables, human_dev, judge_dev)
    var_h = (human_margin * human_dev**2).sum(axis=1)
    var_j = (judge_margin * judge_dev**2).sum(axis=1)
    denom = np.sqrt(var_h * var_j)
    return safe_divide(cov, np.where(denom < 1e-12, 0, denom))


def table_kendall_tau_b(tables: np.ndarray) -> np.ndarray:
    """Kendall's tau-b from the table (equals scipy.stats.kendalltau's default)."""
    batch, k, _ = tables.shape
    # at_least[b, h, j] = Σ_{h' ≥ h, j' ≥ j} T ;  above_left[b, h, j] = Σ_{h' ≥ h, j' ≤ j} T
    at_least = tables[:, ::-1, ::-1].cumsum(axis=1).cumsum(axis=2)[:, ::-1, ::-1]
    above_left = tables[:, ::-1, :].cumsum(axis=1)[:, ::-1, :].cumsum(axis=2)
    padded_at_least = np.zeros((batch, k + 1, k + 1))
    padded_at_least[:, :k, :k] = at_least
    padded_above_left = np.zeros((batch, k + 1, k + 1))
    padded_above_left[:, :k, 1:] = above_left
    strictly_above_right = padded_at_least[:, 1:, 1:]          # h' > h, j' > j
    strictly_above_left = padded_above_left[:, 1:, :k]          # h' > h, j' < j
    concordant = (tables * strictly_above_right).sum(axis=(1, 2))
    discordant = (tables * strictly_above_left).sum(axis=(1, 2))
    n = tables.sum(axis=(1, 2))
    pairs = n * (n - 1) / 2
    human_ties = (tables.sum(axis=2) * (tables.sum(axis=2) - 1) / 2).sum(axis=1)
    judge_ties = (tables.sum(axis=1) * (tables.sum(axis=1) - 1) / 2).sum(axis=1)
    denom = np.sqrt((pairs - human_ties) * (pairs - judge_ties))
    return safe_divide(concordant - discordant, np.where(denom < 1e-12, 0, denom))


def table_share_within(tables: np.ndarray, max_gap: int) -> np.ndarray:
    k = tables.shape[-1]
    idx = np.arange(k)
    mask = np.abs(idx[:, None] - idx[None, :]) <= max_gap
    return safe_divide((tables * mask).sum(axis=(1, 2)), tables.sum(axis=(1, 2)))


def table_mean_difference(tables: np.ndarray) -> np.ndarray:
    k = tables.shape[-1]
    idx = np.arange(k)
    judge_minus_human = idx[None, :] - idx[:, None]
    return safe_divide((tables * judge_minus_human).sum(axis=(1, 2)), tables.sum(axis=(1, 2)))


# Binary tables: rows human [False, True], columns judge [False, True].
def binary_accuracy(t: np.ndarray) -> np.ndarray:
    return safe_divide(t[:, 0, 0] + t[:, 1, 1], t.sum(axis=(1, 2)))


def binary_precision(t: np.ndarray) -> np.ndarray:
    return safe_divide(t[:, 1, 1], t[:, 1, 1] + t[:, 0, 1])


def binary_recall(t: np.ndarray) -> np.ndarray:
    return safe_divide(t[:, 1, 1], t[:, 1, 1] + t[:, 1, 0])


def binary_f1(t: np.ndarray) -> np.ndarray:
    return safe_divide(2 * t[:, 1, 1], 2 * t[:, 1, 1] + t[:, 0, 1] + t[:, 1, 0])
