"""How far an LLM judge agrees with people, and how far people agree with each other.

Judge vs human (paired integer scores on a 1..K scale): exact and within-±1 agreement, Cohen's kappa
(quadratic / linear / unweighted), Spearman and Kendall tau-b, mean judge−human difference, each with a seeded
percentile-bootstrap confidence interval; the K×K confusion matrix and the most-disagreeing items.
Judge vs human on yes/no labels: accuracy, precision, recall, F1 and kappa with the same CI machinery.
Between experts: Krippendorff's alpha (nominal/ordinal/interval, missing ratings allowed) and Fleiss' kappa.

Why the bootstrap is cheap: every paired statistic here is a function of the K×K contingency table alone, and
resampling n items with replacement is the same as drawing that table from Multinomial(n, observed cell shares).
So one replicate costs O(K²) instead of O(n), and all replicates are computed as one (n_boot, K, K) array.

Undefined statistics (too few items, constant ratings) are `None` with a note saying why — never NaN.
NaN is used only inside the vectorised maths to mark undefined bootstrap replicates, which are then left out.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from rubriceval.errors import RubricEvalError
from rubriceval.verdict import Verdict

if TYPE_CHECKING:  # pandas is only needed for the DataFrame helpers
    import pandas as pd

KappaWeights = Literal["quadratic", "linear", "unweighted"]
AlphaLevel = Literal["nominal", "ordinal", "interval"]

# A bootstrap CI is reported only when at least this share of replicates gave a defined value. Below it the
# surviving replicates are a biased sample (tiny or near-constant data: e.g. 10 items of which 9 are 5/5 leave
# kappa 0/0 in a third of the resamples and the rest say [1.00, 1.00]), and an interval would mislead.
MIN_DEFINED_REPLICATE_SHARE = 0.9


class AgreementInputError(RubricEvalError, ValueError):
    """Scores or labels that cannot be compared (length mismatch, off-scale, unscored, unknown label)."""


# --------------------------------------------------------------------------------------------------------------
# Result models
# --------------------------------------------------------------------------------------------------------------

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


class WorstItem(BaseModel):
    """One item where judge and human disagree, for the audit queue."""

    id: str
    judge: int
    human: int
    gap: int                            # |judge − human|


class AgreementReport(BaseModel):
    """Judge vs human agreement on a 1..K scale. Confusion rows are the human score, columns the judge score."""

    name: str = ""                      # e.g. "情绪安抚 v3"
    n: int                              # paired (scored) items
    n_unscored: int = 0                 # judge verdicts left out because they carry no score
    scale: tuple[int, int]
    exact: Estimate
    within_one: Estimate
    kappa_quadratic: Estimate
    spearman: Estimate
    kendall: Estimate
    mean_difference: Estimate           # mean(judge − human): > 0 means the judge is more lenient
    confusion: list[list[int]]
    worst_items: list[WorstItem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    n_boot: int
    confidence: float
    seed: int

    @property
    def scale_values(self) -> list[int]:
        return list(range(self.scale[0], self.scale[1] + 1))

    def summary(self) -> str:
        """One line, e.g. '情绪安抚 v3: κ = 0.71 [0.58, 0.80] on 120 audited items'."""
        prefix = f"{self.name}: " if self.name else ""
        kappa = self.kappa_quadratic
        if kappa.value is None:
            body = f"κ undefined ({kappa.note})"
        else:
            body = f"κ = {kappa.format()}"
        text = f"{prefix}{body} on {self.n} audited item{'s' if self.n != 1 else ''}"
        if self.n_unscored:
            text += f" ({self.n_unscored} unscored left out)"
        return text

    def confusion_frame(self) -> pd.DataFrame:
        """The confusion matrix as a DataFrame: index 'human' scores, columns 'judge' scores."""
        import pandas as pd

        values = self.scale_values
        frame = pd.DataFrame(self.confusion, index=pd.Index(values, name="human"),
                             columns=pd.Index(values, name="judge"))
        return frame


class BinaryDisagreement(BaseModel):
    id: str
    judge: bool
    human: bool
    kind: Literal["false_positive", "false_negative"]


class BinaryAgreementReport(BaseModel):
    """Judge vs human on yes/no labels; 'positive' is True (e.g. 'hallucination: yes').

    Confusion rows are the human label, columns the judge label, in the order [False, True].
    """

    name: str = ""
    n: int
    n_unscored: int = 0
    accuracy: Estimate
    precision: Estimate
    recall: Estimate
    f1: Estimate
    kappa: Estimate
    confusion: list[list[int]]
    disagreements: list[BinaryDisagreement] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    n_boot: int
    confidence: float
    seed: int

    def summary(self) -> str:
        prefix = f"{self.name}: " if self.name else ""
        kappa = f"κ = {self.kappa.format()}" if self.kappa.value is not None else f"κ undefined ({self.kappa.note})"
        f1 = f"F1 = {self.f1.format()}" if self.f1.value is not None else "F1 undefined"
        text = f"{prefix}{kappa}, {f1} on {self.n} audited item{'s' if self.n != 1 else ''}"
        if self.n_unscored:
            text += f" ({self.n_unscored} unscored left out)"
        return text

    def confusion_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.confusion, index=pd.Index([False, True], name="human"),
                            columns=pd.Index([False, True], name="judge"))


# --------------------------------------------------------------------------------------------------------------
# Bootstrap machinery shared by every statistic
# --------------------------------------------------------------------------------------------------------------

TableStatistic = Callable[[np.ndarray], np.ndarray]   # (B, K, K) counts → (B,) values, NaN where undefined


def _check_bootstrap_args(n_boot: int, confidence: float) -> None:
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


def _estimate(value: float, replicates: np.ndarray | None, confidence: float, label: str,
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


def _bootstrap_tables(table: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """n_boot resampled contingency tables, shape (n_boot, K, K): the item bootstrap drawn as a multinomial."""
    n = int(table.sum())
    rng = np.random.default_rng(seed)
    shares = (table / n).ravel()
    draws = rng.multinomial(n, shares, size=n_boot)
    return draws.reshape(n_boot, *table.shape).astype(float)


# --------------------------------------------------------------------------------------------------------------
# Table statistics, vectorised over a leading batch axis. T[b, h, j] = count(human = h-th value, judge = j-th).
# --------------------------------------------------------------------------------------------------------------

def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _kappa_disagreement_weights(k: int, weights: KappaWeights) -> np.ndarray:
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


def _table_kappa(tables: np.ndarray, weights: KappaWeights) -> np.ndarray:
    """Cohen's kappa = 1 − Σ w·observed / Σ w·expected-by-chance."""
    w = _kappa_disagreement_weights(tables.shape[-1], weights)
    n = tables.sum(axis=(1, 2))
    human_margin = tables.sum(axis=2)
    judge_margin = tables.sum(axis=1)
    expected = human_margin[:, :, None] * judge_margin[:, None, :] / np.where(n == 0, 1, n)[:, None, None]
    observed_disagreement = (w * tables).sum(axis=(1, 2))
    expected_disagreement = (w * expected).sum(axis=(1, 2))
    # Expected disagreement is 0 only when both raters put everything in one and the same category: 0/0.
    return 1 - _safe_divide(observed_disagreement, np.where(expected_disagreement < 1e-12, 0, expected_disagreement))


def _midranks(margin: np.ndarray) -> np.ndarray:
    """Average rank of each category given its counts (ties share the mean of their ranks), shape (B, K)."""
    before = np.cumsum(margin, axis=1) - margin
    return before + (margin + 1) / 2


def _table_spearman(tables: np.ndarray) -> np.ndarray:
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
    return _safe_divide(cov, np.where(denom < 1e-12, 0, denom))


def _table_kendall_tau_b(tables: np.ndarray) -> np.ndarray:
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
    return _safe_divide(concordant - discordant, np.where(denom < 1e-12, 0, denom))


def _table_share_within(tables: np.ndarray, max_gap: int) -> np.ndarray:
    k = tables.shape[-1]
    idx = np.arange(k)
    mask = np.abs(idx[:, None] - idx[None, :]) <= max_gap
    return _safe_divide((tables * mask).sum(axis=(1, 2)), tables.sum(axis=(1, 2)))


def _table_mean_difference(tables: np.ndarray) -> np.ndarray:
    k = tables.shape[-1]
    idx = np.arange(k)
    judge_minus_human = idx[None, :] - idx[:, None]
    return _safe_divide((tables * judge_minus_human).sum(axis=(1, 2)), tables.sum(axis=(1, 2)))


# Binary tables: rows human [False, True], columns judge [False, True].
def _binary_accuracy(t: np.ndarray) -> np.ndarray:
    return _safe_divide(t[:, 0, 0] + t[:, 1, 1], t.sum(axis=(1, 2)))


def _binary_precision(t: np.ndarray) -> np.ndarray:
    return _safe_divide(t[:, 1, 1], t[:, 1, 1] + t[:, 0, 1])


def _binary_recall(t: np.ndarray) -> np.ndarray:
    return _safe_divide(t[:, 1, 1], t[:, 1, 1] + t[:, 1, 0])


def _binary_f1(t: np.ndarray) -> np.ndarray:
    return _safe_divide(2 * t[:, 1, 1], 2 * t[:, 1, 1] + t[:, 0, 1] + t[:, 1, 0])


# --------------------------------------------------------------------------------------------------------------
# Input handling
# --------------------------------------------------------------------------------------------------------------

def _natural_key(item_id: str) -> tuple[Any, ...]:
    """'item-2' sorts before 'item-10'."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", item_id) if part)


def _as_int_scores(values: Sequence[Any], who: str, scale: tuple[int, int]) -> np.ndarray:
    """Integer scores on the scale; floats are accepted only when integral (Verdict.score is a float)."""
    out = np.empty(len(values), dtype=int)
    low, high = scale
    for i, value in enumerate(values):
        if value is None or isinstance(value, bool) or (isinstance(value, float) and not np.isfinite(value)):
            raise AgreementInputError(
                f"{who} score #{i} is {value!r}", field=who,
                hint="leave unscored items out and count them separately (see agreement_from_verdicts)")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise AgreementInputError(f"{who} score #{i} is not a number: {value!r}", field=who) from None
        if number != int(number):
            raise AgreementInputError(
                f"{who} score #{i} is {value!r}, not an integer", field=who,
                hint="kappa and the confusion matrix need whole scores; use the median of several raters")
        if not low <= number <= high:
            raise AgreementInputError(f"{who} score #{i} is {value!r}, outside the scale {low}..{high}", field=who)
        out[i] = int(number)
    return out


def _check_ids(ids: Sequence[str] | None, n: int) -> list[str]:
    if ids is None:
        return [str(i) for i in range(n)]
    ids = [str(i) for i in ids]
    if len(ids) != n:
        raise AgreementInputError(f"got {len(ids)} ids for {n} score pairs", field="ids")
    seen: set[str] = set()
    for item_id in ids:
        if item_id in seen:
            raise AgreementInputError(f"duplicate id '{item_id}'", field="ids",
                                      hint="each audited item must appear once")
        seen.add(item_id)
    return ids


def confusion_matrix(judge: Sequence[int], human: Sequence[int], *, scale: tuple[int, int] = (1, 5)) -> list[list[int]]:
    """K×K counts; rows are the human score, columns the judge score, both in scale order."""
    _check_scale(scale)
    judge_arr = _as_int_scores(judge, "judge", scale)
    human_arr = _as_int_scores(human, "human", scale)
    if len(judge_arr) != len(human_arr):
        raise AgreementInputError(f"{len(judge_arr)} judge scores but {len(human_arr)} human scores")
    return _table(judge_arr, human_arr, scale).astype(int).tolist()


def _check_scale(scale: tuple[int, int]) -> None:
    low, high = scale
    if int(low) != low or int(high) != high or high <= low:
        raise AgreementInputError(f"scale must be two integers low < high, got {scale}", field="scale")


def _table(judge: np.ndarray, human: np.ndarray, scale: tuple[int, int]) -> np.ndarray:
    k = scale[1] - scale[0] + 1
    cells = (human - scale[0]) * k + (judge - scale[0])
    return np.bincount(cells, minlength=k * k).reshape(k, k).astype(float)


class _PairedScores:
    """Validated judge/human score pairs and everything derived from their contingency table."""

    def __init__(self, judge: Sequence[Any], human: Sequence[Any], ids: Sequence[str] | None,
                 scale: tuple[int, int]):
        _check_scale(scale)
        if len(judge) != len(human):
            raise AgreementInputError(f"{len(judge)} judge scores but {len(human)} human scores",
                                      hint="pass one judge score and one human score per item, in the same order")
        self.scale = (int(scale[0]), int(scale[1]))
        self.judge = _as_int_scores(judge, "judge", self.scale)
        self.human = _as_int_scores(human, "human", self.scale)
        self.ids = _check_ids(ids, len(self.judge))
        self.n = len(self.judge)
        self.table = _table(self.judge, self.human, self.scale)

    def constant_note(self) -> str | None:
        """Why a correlation is undefined, or None when both raters use at least two scores."""
        parts = []
        for who, scores in (("judge", self.judge), ("human", self.human)):
            if self.n and np.all(scores == scores[0]):
                parts.append(f"{who} gave every item the same score ({scores[0]})")
        return "; ".join(parts) or None

    def worst_items(self, limit: int) -> list[WorstItem]:
        gaps = np.abs(self.judge - self.human)
        rows = [WorstItem(id=self.ids[i], judge=int(self.judge[i]), human=int(self.human[i]), gap=int(gaps[i]))
                for i in range(self.n) if gaps[i] > 0]
        rows.sort(key=lambda row: (-row.gap, _natural_key(row.id)))
        return rows[:limit]


def _paired_estimate(pairs: _PairedScores, statistic: TableStatistic, boot: np.ndarray | None, confidence: float,
                     label: str) -> Estimate:
    """A statistic defined for any non-empty table (shares, mean difference) plus its bootstrap CI."""
    if pairs.n == 0:
        return Estimate(note="no paired items")
    value = float(statistic(pairs.table[None])[0])
    if pairs.n < 2:
        return Estimate(value=value, note="one item: no confidence interval")
    replicates = statistic(boot) if boot is not None else None
    return _estimate(value, replicates, confidence, label)


# --------------------------------------------------------------------------------------------------------------
# Public API: judge vs human on a 1..K scale
# --------------------------------------------------------------------------------------------------------------

def cohen_kappa(judge: Sequence[int], human: Sequence[int], *, weights: KappaWeights = "quadratic",
                scale: tuple[int, int] = (1, 5), n_boot: int = 1000, confidence: float = 0.95,
                seed: int = 0) -> Estimate:
    """Cohen's kappa with a bootstrap CI. Weights follow distance on the scale, so an unused score in the middle
    does not change the weighting (sklearn weights by index among observed labels unless `labels=` is given)."""
    _check_bootstrap_args(n_boot, confidence)
    _kappa_disagreement_weights(2, weights)  # validate the name early
    pairs = _PairedScores(judge, human, None, scale)
    boot = _bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None
    return _kappa_estimate(pairs, boot, confidence, weights)


def _kappa_estimate(pairs: _PairedScores, boot: np.ndarray | None, confidence: float,
                    weights: KappaWeights) -> Estimate:
    label = "kappa" if weights == "unweighted" else f"{weights}-weighted kappa"
    if pairs.n == 0:
        return Estimate(note="no paired items")
    if pairs.n < 2:
        return Estimate(note=f"{label} needs at least 2 items, got {pairs.n}")
    value = float(_table_kappa(pairs.table[None], weights)[0])
    if not np.isfinite(value):
        return Estimate(note=(f"{label} is undefined: both raters gave every item the same score "
                              f"({pairs.judge[0]}), so chance agreement is total (0/0)"))
    constant = pairs.constant_note()
    caveat = f"{constant}: kappa is 0 by construction" if constant else None
    replicates = _table_kappa(boot, weights) if boot is not None else None
    return _estimate(value, replicates, confidence, label, caveat)


def spearman(judge: Sequence[int], human: Sequence[int], *, scale: tuple[int, int] = (1, 5), n_boot: int = 1000,
             confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Spearman's rho (scipy) with a bootstrap CI."""
    _check_bootstrap_args(n_boot, confidence)
    pairs = _PairedScores(judge, human, None, scale)
    boot = _bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None
    return _correlation_estimate(pairs, boot, confidence, "spearman")


def kendall(judge: Sequence[int], human: Sequence[int], *, scale: tuple[int, int] = (1, 5), n_boot: int = 1000,
            confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Kendall's tau-b (scipy) with a bootstrap CI."""
    _check_bootstrap_args(n_boot, confidence)
    pairs = _PairedScores(judge, human, None, scale)
    boot = _bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None
    return _correlation_estimate(pairs, boot, confidence, "kendall")


def _correlation_estimate(pairs: _PairedScores, boot: np.ndarray | None, confidence: float,
                          which: Literal["spearman", "kendall"]) -> Estimate:
    label = "Spearman's rho" if which == "spearman" else "Kendall's tau-b"
    if pairs.n == 0:
        return Estimate(note="no paired items")
    if pairs.n < 2:
        return Estimate(note=f"{label} needs at least 2 items, got {pairs.n}")
    constant = pairs.constant_note()
    if constant:
        # scipy would return NaN with a warning; say why instead.
        return Estimate(note=f"{label} is undefined: {constant}")
    from scipy import stats             # imported here: scipy.stats costs ~1 s, and most commands never get here

    if which == "spearman":
        value = float(stats.spearmanr(pairs.judge, pairs.human).statistic)
        replicates = _table_spearman(boot) if boot is not None else None
    else:
        value = float(stats.kendalltau(pairs.judge, pairs.human).statistic)
        replicates = _table_kendall_tau_b(boot) if boot is not None else None
    return _estimate(value, replicates, confidence, label)


def agreement_report(judge: Sequence[int], human: Sequence[int], *, ids: Sequence[str] | None = None,
                     scale: tuple[int, int] = (1, 5), name: str = "", n_boot: int = 1000,
                     confidence: float = 0.95, seed: int = 0, worst_k: int = 10,
                     n_unscored: int = 0) -> AgreementReport:
    """Every judge-vs-human statistic for one rubric, with bootstrap CIs that share one set of resamples."""
    _check_bootstrap_args(n_boot, confidence)
    pairs = _PairedScores(judge, human, ids, scale)
    boot = _bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None
    estimates = {
        "exact": _paired_estimate(pairs, lambda t: _table_share_within(t, 0), boot, confidence,
                                  "exact agreement"),
        "within_one": _paired_estimate(pairs, lambda t: _table_share_within(t, 1), boot, confidence,
                                       "within-±1 agreement"),
        "kappa_quadratic": _kappa_estimate(pairs, boot, confidence, "quadratic"),
        "spearman": _correlation_estimate(pairs, boot, confidence, "spearman"),
        "kendall": _correlation_estimate(pairs, boot, confidence, "kendall"),
        "mean_difference": _paired_estimate(pairs, _table_mean_difference, boot, confidence,
                                            "mean judge−human difference"),
    }
    notes = [f"{field}: {estimate.note}" for field, estimate in estimates.items() if estimate.note]
    if n_unscored:
        notes.insert(0, f"{n_unscored} judge verdict(s) were unscored and are not in these statistics")
    return AgreementReport(
        name=name, n=pairs.n, n_unscored=n_unscored, scale=pairs.scale, confusion=pairs.table.astype(int).tolist(),
        worst_items=pairs.worst_items(worst_k), notes=notes, n_boot=n_boot, confidence=confidence, seed=seed,
        **estimates,
    )


class PairedVerdicts(BaseModel):
    """Judge verdicts matched to human scores by sample id."""

    ids: list[str]
    judge: list[float]                                          # Verdict.score is a float; integrality is
    human: list[float]                                          # checked by agreement_report
    unscored: dict[str, str] = Field(default_factory=dict)     # sample id → unscored_reason
    missing_human: list[str] = Field(default_factory=list)     # verdicts with no human score (not audited)


def pair_verdicts(verdicts: Iterable[Verdict], human_scores: Mapping[str, float]) -> PairedVerdicts:
    """Match verdicts to human scores; unscored verdicts are kept aside with their reason, never scored as 0."""
    paired = PairedVerdicts(ids=[], judge=[], human=[])
    for verdict in verdicts:
        if verdict.sample_id not in human_scores:
            paired.missing_human.append(verdict.sample_id)
        elif verdict.score is None:
            paired.unscored[verdict.sample_id] = verdict.unscored_reason or "unscored"
        else:
            paired.ids.append(verdict.sample_id)
            paired.judge.append(verdict.score)
            paired.human.append(human_scores[verdict.sample_id])
    return paired


def agreement_from_verdicts(verdicts: Iterable[Verdict], human_scores: Mapping[str, float], **kwargs: Any
                            ) -> AgreementReport:
    """agreement_report over the audited verdicts; unscored verdicts are counted in `n_unscored`."""
    paired = pair_verdicts(verdicts, human_scores)
    return agreement_report(paired.judge, paired.human, ids=paired.ids, n_unscored=len(paired.unscored), **kwargs)


# --------------------------------------------------------------------------------------------------------------
# Public API: judge vs human on yes/no labels
# --------------------------------------------------------------------------------------------------------------

_TRUE_LABELS = {"yes", "y", "true", "1", "是", "有"}
_FALSE_LABELS = {"no", "n", "false", "0", "否", "无", "没有"}


def as_binary_label(value: Any, *, who: str = "label", index: int | None = None) -> bool:
    """bool from True/False, 1/0 or 'yes'/'no' (also '是'/'否'); anything else is an error, never a guess."""
    where = f"{who} #{index}" if index is not None else who
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE_LABELS:
            return True
        if text in _FALSE_LABELS:
            return False
    raise AgreementInputError(f"{where} is {value!r}, not a yes/no label", field=who,
                              hint="use True/False, 1/0 or 'yes'/'no'; leave unjudged items out")


def binary_agreement_report(judge: Sequence[Any], human: Sequence[Any], *, ids: Sequence[str] | None = None,
                            name: str = "", n_boot: int = 1000, confidence: float = 0.95, seed: int = 0,
                            max_disagreements: int = 20, n_unscored: int = 0) -> BinaryAgreementReport:
    """Accuracy, precision, recall, F1 (positive = True) and Cohen's kappa, each with a bootstrap CI."""
    _check_bootstrap_args(n_boot, confidence)
    if len(judge) != len(human):
        raise AgreementInputError(f"{len(judge)} judge labels but {len(human)} human labels")
    judge_arr = np.array([as_binary_label(v, who="judge", index=i) for i, v in enumerate(judge)], dtype=bool)
    human_arr = np.array([as_binary_label(v, who="human", index=i) for i, v in enumerate(human)], dtype=bool)
    # A binary label is a 0..1 score, so the paired-score machinery (table, kappa, bootstrap) applies unchanged.
    pairs = _PairedScores(judge_arr.astype(int).tolist(), human_arr.astype(int).tolist(), ids, (0, 1))
    boot = _bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None

    def rate(statistic: TableStatistic, label: str, undefined_when: str) -> Estimate:
        if pairs.n == 0:
            return Estimate(note="no paired items")
        value = float(statistic(pairs.table[None])[0])
        if not np.isfinite(value):
            return Estimate(note=f"{label} is undefined: {undefined_when}")
        if pairs.n < 2:
            return Estimate(value=value, note="one item: no confidence interval")
        replicates = statistic(boot) if boot is not None else None
        return _estimate(value, replicates, confidence, label)

    estimates = {
        "accuracy": rate(_binary_accuracy, "accuracy", "no items"),
        "precision": rate(_binary_precision, "precision", "the judge never said yes"),
        "recall": rate(_binary_recall, "recall", "humans never said yes"),
        "f1": rate(_binary_f1, "F1", "neither the judge nor humans ever said yes"),
        "kappa": _kappa_estimate(pairs, boot, confidence, "unweighted"),
    }
    disagreements = [
        BinaryDisagreement(id=pairs.ids[i], judge=bool(judge_arr[i]), human=bool(human_arr[i]),
                           kind="false_positive" if judge_arr[i] else "false_negative")
        for i in range(pairs.n) if judge_arr[i] != human_arr[i]
    ]
    disagreements.sort(key=lambda row: _natural_key(row.id))
    notes = [f"{field}: {estimate.note}" for field, estimate in estimates.items() if estimate.note]
    if n_unscored:
        notes.insert(0, f"{n_unscored} judge verdict(s) were unscored and are not in these statistics")
    return BinaryAgreementReport(
        name=name, n=pairs.n, n_unscored=n_unscored, confusion=pairs.table.astype(int).tolist(),
        disagreements=disagreements[:max_disagreements], notes=notes, n_boot=n_boot, confidence=confidence,
        seed=seed, **estimates,
    )


# --------------------------------------------------------------------------------------------------------------
# Between experts: Krippendorff's alpha and Fleiss' kappa
# --------------------------------------------------------------------------------------------------------------

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
    return 1 - _safe_divide((n - 1) * observed, np.where(expected < 1e-12, 0, expected))


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
    _check_bootstrap_args(n_boot, confidence)
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
    return _estimate(value, replicates, confidence, f"{level} alpha")


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
    return _safe_divide(observed - chance, np.where(np.abs(denom) < 1e-12, 0, denom))


def fleiss_kappa_from_counts(counts: Any, *, n_boot: int = 0, confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Fleiss' kappa from a subjects × categories matrix of how many raters chose each category."""
    _check_bootstrap_args(n_boot, confidence)
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
    return _estimate(value, replicates, confidence, "Fleiss' kappa")


def fleiss_kappa(ratings: Any, *, n_boot: int = 0, confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Fleiss' kappa (nominal) for a complete subjects × raters matrix of category labels."""
    matrix = _ratings_matrix(ratings)
    if np.isnan(matrix).any():
        raise AgreementInputError("Fleiss' kappa needs complete data, but some ratings are missing",
                                  field="ratings", hint="use krippendorff_alpha, which handles missing ratings")
    categories = np.unique(matrix)
    counts = (matrix[:, :, None] == categories[None, None, :]).sum(axis=1)
    return fleiss_kappa_from_counts(counts, n_boot=n_boot, confidence=confidence, seed=seed)
