"""Judge vs human on yes/no labels: accuracy, precision, recall, F1 and kappa with the same CI machinery."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from rubriceval.stats.agreement.estimate import (
    AgreementInputError,
    Estimate,
    TableStatistic,
    bootstrap_tables,
    check_bootstrap_args,
    estimate_with_ci,
)
from rubriceval.stats.agreement.paired import PairedScores, kappa_estimate, natural_key
from rubriceval.stats.agreement.tables import binary_accuracy, binary_f1, binary_precision, binary_recall

if TYPE_CHECKING:  # pandas is only needed for the DataFrame helper
    import pandas as pd


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
    check_bootstrap_args(n_boot, confidence)
    if len(judge) != len(human):
        raise AgreementInputError(f"{len(judge)} judge labels but {len(human)} human labels")
    judge_arr = np.array([as_binary_label(v, who="judge", index=i) for i, v in enumerate(judge)], dtype=bool)
    human_arr = np.array([as_binary_label(v, who="human", index=i) for i, v in enumerate(human)], dtype=bool)
    # A binary label is a 0..1 score, so the paired-score machinery (table, kappa, bootstrap) applies unchanged.
    pairs = PairedScores(judge_arr.astype(int).tolist(), human_arr.astype(int).tolist(), ids, (0, 1))
    boot = bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None

    def rate(statistic: TableStatistic, label: str, undefined_when: str) -> Estimate:
        if pairs.n == 0:
            return Estimate(note="no paired items")
        value = float(statistic(pairs.table[None])[0])
        if not np.isfinite(value):
            return Estimate(note=f"{label} is undefined: {undefined_when}")
        if pairs.n < 2:
            return Estimate(value=value, note="one item: no confidence interval")
        replicates = statistic(boot) if boot is not None else None
        return estimate_with_ci(value, replicates, confidence, label)

    estimates = {
        "accuracy": rate(binary_accuracy, "accuracy", "no items"),
        "precision": rate(binary_precision, "precision", "the judge never said yes"),
        "recall": rate(binary_recall, "recall", "humans never said yes"),
        "f1": rate(binary_f1, "F1", "neither the judge nor humans ever said yes"),
        "kappa": kappa_estimate(pairs, boot, confidence, "unweighted"),
    }
    disagreements = [
        BinaryDisagreement(id=pairs.ids[i], judge=bool(judge_arr[i]), human=bool(human_arr[i]),
                           kind="false_positive" if judge_arr[i] else "false_negative")
        for i in range(pairs.n) if judge_arr[i] != human_arr[i]
    ]
    disagreements.sort(key=lambda row: natural_key(row.id))
    notes = [f"{field}: {estimate.note}" for field, estimate in estimates.items() if estimate.note]
    if n_unscored:
        notes.insert(0, f"{n_unscored} judge verdict(s) were unscored and are not in these statistics")
    return BinaryAgreementReport(
        name=name, n=pairs.n, n_unscored=n_unscored, confusion=pairs.table.astype(int).tolist(),
        disagreements=disagreements[:max_disagreements], notes=notes, n_boot=n_boot, confidence=confidence,
        seed=seed, **estimates,
    )
