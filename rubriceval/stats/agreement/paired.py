"""Judge/human score pairs: validation, the contingency table, and estimates that share one set of resamples."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

from rubriceval.stats.agreement.estimate import AgreementInputError, Estimate, TableStatistic, estimate_with_ci
from rubriceval.stats.agreement.tables import KappaWeights, table_kappa, table_kendall_tau_b, table_spearman


class WorstItem(BaseModel):
    """One item where judge and human disagree, for the audit queue."""

    id: str
    judge: int
    human: int
    gap: int                            # |judge − human|


def natural_key(item_id: str) -> tuple[Any, ...]:
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
    return contingency_table(judge_arr, human_arr, scale).astype(int).tolist()


def _check_scale(scale: tuple[int, int]) -> None:
    low, high = scale
    if int(low) != low or int(high) != high or high <= low:
        raise AgreementInputError(f"scale must be two integers low < high, got {scale}", field="scale")


def contingency_table(judge: np.ndarray, human: np.ndarray, scale: tuple[int, int]) -> np.ndarray:
    k = scale[1] - scale[0] + 1
    cells = (human - scale[0]) * k + (judge - scale[0])
    return np.bincount(cells, minlength=k * k).reshape(k, k).astype(float)


class PairedScores:
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
        self.table = contingency_table(self.judge, self.human, self.scale)

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
        rows.sort(key=lambda row: (-row.gap, natural_key(row.id)))
        return rows[:limit]


def paired_estimate(pairs: PairedScores, statistic: TableStatistic, boot: np.ndarray | None, confidence: float,
                     label: str) -> Estimate:
    """A statistic defined for any non-empty table (shares, mean difference) plus its bootstrap CI."""
    if pairs.n == 0:
        return Estimate(note="no paired items")
    value = float(statistic(pairs.table[None])[0])
    if pairs.n < 2:
        return Estimate(value=value, note="one item: no confidence interval")
    replicates = statistic(boot) if boot is not None else None
    return estimate_with_ci(value, replicates, confidence, label)


def kappa_estimate(pairs: PairedScores, boot: np.ndarray | None, confidence: float,
                    weights: KappaWeights) -> Estimate:
    label = "kappa" if weights == "unweighted" else f"{weights}-weighted kappa"
    if pairs.n == 0:
        return Estimate(note="no paired items")
    if pairs.n < 2:
        return Estimate(note=f"{label} needs at least 2 items, got {pairs.n}")
    value = float(table_kappa(pairs.table[None], weights)[0])
    if not np.isfinite(value):
        return Estimate(note=(f"{label} is undefined: both raters gave every item the same score "
                              f"({pairs.judge[0]}), so chance agreement is total (0/0)"))
    constant = pairs.constant_note()
    caveat = f"{constant}: kappa is 0 by construction" if constant else None
    replicates = table_kappa(boot, weights) if boot is not None else None
    return estimate_with_ci(value, replicates, confidence, label, caveat)


def correlation_estimate(pairs: PairedScores, boot: np.ndarray | None, confidence: float,
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
    from scipy import stats  # imported here: scipy.stats costs ~1 s, and most commands never get here

    if which == "spearman":
        value = float(stats.spearmanr(pairs.judge, pairs.human).statistic)
        replicates = table_spearman(boot) if boot is not None else None
    else:
        value = float(stats.kendalltau(pairs.judge, pairs.human).statistic)
        replicates = table_kendall_tau_b(boot) if boot is not None else None
    return estimate_with_ci(value, replicates, confidence, label)
