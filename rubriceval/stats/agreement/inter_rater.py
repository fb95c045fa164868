"""Between experts: Krippendorff's alpha (nominal/ordinal/interval, missing ratings allowed) and Fleiss' kappa."""
from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rubriceval.stats.agreement.estimate import AgreementInputError, Estimate, check_bootstrap_args, estimate_with_ci
from rubriceval.stats.agreement.tables import safe_divide

AlphaLevel = Literal["nominal", "ordinal", "interval"]


def _unit_weights(n_units: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each unit is drawn in each bootstrap resample of the units, shape (n_boot, n_units)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_units, np.full(n_units, 1 / n_units), size=n_boot).astype(float)


def _alpha_from_coincidences(coincidences: np.ndarray, values: np.ndarray, level: AlphaLevel) -> np.ndarray:
    """alpha = 1 − (n − 1)·Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, batched over the leading axis of (B, V, V)."""
    value_totals = coincidences.sum(axis=2)                     # n_c
    n = value_totals.sum(axis=1)
    if level == "nominal":
        delta = np.broadcast_to(1 - np.eye(len(values)), coincidences.shape)
    elif level == "interval":
        delta = np.broadcast_to((values[:, None] - values[None, :]) ** 2, coincidences.shape)
    elif level == "ordinal":
        # δ_ck = Σ_{g=c..k} n_g − (n_c + n_k)/2, which is the gap between the values' midranks.
        midrank = np.cumsum(value_totals, axis=1) - value_totals / 2
        delta = (midrank[:, :, None] - midrank[:, None, :]) ** 2
    else:
        raise AgreementInputError(f"unknown level '{level}'", hint="use nominal, ordinal or interval")
    observed = (coincidences * delta).sum(axis=(1, 2))
    expected = np.einsum("bc,bk,bck->b", value_totals, value_totals, delta)
    return 1 - safe_divide((n - 1) * observed, np.where(expected < 1e-12, 0, expected))


def _ratings_matrix(ratings: Any) -> np.ndarray:
    try:
        matrix = np.array(ratings, dtype=float)   # None → NaN
    except (TypeError, ValueError):
        raise AgreementInputError("ratings must be numbers (NaN or None for missing)", field="ratings") from None
    if matrix.ndim != 2:
        raise AgreementInputError(f"ratings must be a units × raters matrix, got {matrix.ndim} dimension(s)",
                                  field="ratings")
    if np.isinf(matrix).any():
        raise AgreementInputError("ratings contain infinity", field="ratings")
    return matrix


def krippendorff_alpha(ratings: Any, *, level: AlphaLevel = "ordinal", n_boot: int = 0, confidence: float = 0.95,
                       seed: int = 0) -> Estimate:
    """Krippendorff's alpha for a units × raters matrix; NaN/None marks a missing rating.

    Units rated by fewer than two raters are not pairable and are left out, as Krippendorff prescribes. With
    n_boot > 0 the CI resamples units (not Krippendorff's own resampling of pairable values).
    """
    check_bootstrap_args(n_boot, confidence)
    matrix = _ratings_matrix(ratings)
    present = ~np.isnan(matrix)
    values = np.unique(matrix[present])
    if values.size == 0:
        return Estimate(note="no ratings")
    counts = (matrix[:, :, None] == values[None, None, :]).sum(axis=1).astype(float)   # units × values
    per_unit = counts.sum(axis=1)
    pairable = per_unit >= 2
    if not pairable.any():
        return Estimate(note="alpha is undefined: no unit was rated by at least two raters")
    counts, per_unit = counts[pairable], per_unit[pairable]
    # Each unit adds (n_uc·n_uk − [c = k]·n_uc) / (m_u − 1) to the coincidence matrix.
    scaled = counts / (per_unit - 1)[:, None]
    self_pairs = np.diag(scaled.sum(axis=0))
    coincidences = (scaled.T @ counts - self_pairs)[None]
    value = float(_alpha_from_coincidences(coincidences, values, level)[0])
    if not np.isfinite(value):
        return Estimate(note=f"alpha is undefined: every pairable rating is {values[0]:g}, so expected "
                             f"disagreement is 0 (0/0)")
    replicates = None
    if n_boot:
        weights = _unit_weights(len(counts), n_boot, seed)
        replicates = np.concatenate([
            _alpha_from_coincidences(
                np.einsum("bu,uc,uk->bck", block, scaled, counts) - _batched_diag(block @ scaled), values, level)
            for block in np.array_split(weights, max(1, n_boot // 128))
        ])
    return estimate_with_ci(value, replicates, confidence, f"{level} alpha")


def _batched_diag(rows: np.ndarray) -> np.ndarray:
    out = np.zeros((rows.shape[0], rows.shape[1], rows.shape[1]))
    idx = np.arange(rows.shape[1])
    out[:, idx, idx] = rows
    return out


def _fleiss_from_counts(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fleiss' kappa for each row of unit weights (B, N) over the subjects × categories count matrix."""
    raters = counts[0].sum()
    n_subjects = weights.sum(axis=1)
    agreement_per_subject = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    observed = weights @ agreement_per_subject / n_subjects
    category_share = weights @ counts / (n_subjects * raters)[:, None]
    chance = (category_share**2).sum(axis=1)
    denom = 1 - chance
    return safe_divide(observed - chance, np.where(np.abs(denom) < 1e-12, 0, denom))


def fleiss_kappa_from_counts(counts: Any, *, n_boot: int = 0, confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Fleiss' kappa from a subjects × categories matrix of how many raters chose each category."""
    check_bootstrap_args(n_boot, confidence)
    matrix = np.array(counts, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise AgreementInputError("counts must be a non-empty subjects × categories matrix", field="counts")
    if np.isnan(matrix).any() or (matrix < 0).any() or (matrix != np.round(matrix)).any():
        raise AgreementInputError("counts must be non-negative whole numbers", field="counts")
    raters_per_subject = matrix.sum(axis=1)
    if not np.all(raters_per_subject == raters_per_subject[0]):
        raise AgreementInputError(
            "Fleiss' kappa needs the same number of raters for every subject", field="counts",
            hint="use krippendorff_alpha(level='nominal') when ratings are missing")
    if raters_per_subject[0] < 2:
        return Estimate(note="Fleiss' kappa needs at least 2 raters per subject")
    value = float(_fleiss_from_counts(matrix, np.ones((1, len(matrix))))[0])
    if not np.isfinite(value):
        return Estimate(note="Fleiss' kappa is undefined: every rating falls in one category (0/0)")
    replicates = _fleiss_from_counts(matrix, _unit_weights(len(matrix), n_boot, seed)) if n_boot else None
    return estimate_with_ci(value, replicates, confidence, "Fleiss' kappa")


def fleiss_kappa(ratings: Any, *, n_boot: int = 0, confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Fleiss' kappa (nominal) for a complete subjects × raters matrix of category labels."""
    matrix = _ratings_matrix(ratings)
    if np.isnan(matrix).any():
        raise AgreementInputError("Fleiss' kappa needs complete data, but some ratings are missing",
                                  field="ratings", hint="use krippendorff_alpha, which handles missing ratings")
    categories = np.unique(matrix)
    counts = (matrix[:, :, None] == categories[None, None, :]).sum(axis=1)
    return fleiss_kappa_from_counts(counts, n_boot=n_boot, confidence=confidence, seed=seed)
