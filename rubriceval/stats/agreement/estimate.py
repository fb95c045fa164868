"""Estimates with seeded percentile-bootstrap confidence intervals, shared by every agreement statistic.

Undefined statistics (too few items, constant ratings) are `None` with a note saying why — never NaN.
NaN is used only inside the vectorised maths to mark undefined bootstrap replicates, which are then left out.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pydantic import BaseModel, model_validator

from rubriceval.common.errors import RubricEvalError

# A bootstrap CI is reported only when at least this share of replicates gave a defined value. Below it the
# surviving replicates are a biased sample (tiny or near-constant data: e.g. 10 items of which 9 are 5/5 leave
# kappa 0/0 in a third of the resamples and the rest say [1.00, 1.00]), and an interval would mislead.
MIN_DEFINED_REPLICATE_SHARE = 0.9


class AgreementInputError(RubricEvalError, ValueError):
    """Scores or labels that cannot be compared (length mismatch, off-scale, unscored, unknown label)."""


class Estimate(BaseModel):
    """A point estimate with its bootstrap percentile interval; `value is None` ⇔ undefined, and `note` says why."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str | None = None            # why the value or the CI is missing, or a caveat about it
    n_boot_used: int = 0               # bootstrap replicates with a defined value (0 = no CI computed)

    @model_validator(mode="after")
    def _no_nan_and_explained(self) -> Estimate:
        for name in ("value", "ci_low", "ci_high"):
            number = getattr(self, name)
            if number is not None and not np.isfinite(number):
                raise ValueError(f"{name} must be a finite number or None, got {number}")
        if self.value is None and not self.note:
            raise ValueError("an undefined estimate must carry a note saying why")
        if (self.ci_low is None) != (self.ci_high is None):
            raise ValueError("ci_low and ci_high are both set or both None")
        return self

    def format(self, digits: int = 2) -> str:
        """'0.71 [0.58, 0.80]', '0.71' without a CI, or 'undefined'."""
        if self.value is None:
            return "undefined"
        text = f"{self.value:.{digits}f}"
        if self.ci_low is not None and self.ci_high is not None:
            text += f" [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"
        return text


TableStatistic = Callable[[np.ndarray], np.ndarray]   # (B, K, K) counts → (B,) values, NaN where undefined


def check_bootstrap_args(n_boot: int, confidence: float) -> None:
    if n_boot < 0:
        raise AgreementInputError(f"n_boot must be ≥ 0 (0 = no confidence interval), got {n_boot}")
    if not 0 < confidence < 1:
        raise AgreementInputError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence}")


def _percentile_ci(replicates: np.ndarray, confidence: float, label: str) -> tuple[float | None, float | None,
                                                                                    str | None, int]:
    """(low, high, note, n_used) from bootstrap replicates; undefined (NaN) replicates are left out and reported."""
    defined = replicates[np.isfinite(replicates)]
    total = replicates.size
    if total == 0:
        return None, None, None, 0
    dropped = total - defined.size
    if defined.size < MIN_DEFINED_REPLICATE_SHARE * total:
        return None, None, (f"no CI: {label} was undefined in {dropped} of {total} bootstrap resamples "
                            f"(too few items or near-constant ratings)"), int(defined.size)
    tail = (1 - confidence) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    note = None
    if dropped:
        note = f"{dropped} of {total} bootstrap resamples had undefined {label} and were left out of the CI"
    return float(low), float(high), note, int(defined.size)


def estimate_with_ci(value: float, replicates: np.ndarray | None, confidence: float, label: str,
              caveat: str | None = None) -> Estimate:
    """A defined point estimate with its CI; `replicates is None` means no CI was asked for (n_boot = 0)."""
    notes = [caveat] if caveat else []
    low = high = None
    used = 0
    if replicates is not None:
        low, high, ci_note, used = _percentile_ci(replicates, confidence, label)
        if ci_note:
            notes.append(ci_note)
    return Estimate(value=float(value), ci_low=low, ci_high=high, note="; ".join(notes) or None,
                    n_boot_used=used)


def bootstrap_tables(table: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """n_boot resampled contingency tables, shape (n_boot, K, K): the item bootstrap drawn as a multinomial."""
    n = int(table.sum())
    rng = np.random.default_rng(seed)
    shares = (table / n).ravel()
    draws = rng.multinomial(n, shares, size=n_boot)
    return draws.reshape(n_boot, *table.shape).astype(float)
