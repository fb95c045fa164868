"""Judge vs human on a 1..K scale: exact and within-±1 agreement, Cohen's kappa (quadratic / linear / unweighted),
Spearman and Kendall tau-b, mean judge−human difference, each with a bootstrap CI; the confusion matrix and the
most-disagreeing items.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Verdict
from rubriceval.stats.agreement.estimate import Estimate, bootstrap_tables, check_bootstrap_args
from rubriceval.stats.agreement.paired import (
    PairedScores,
    WorstItem,
    correlation_estimate,
    kappa_estimate,
    paired_estimate,
)
from rubriceval.stats.agreement.tables import (
    KappaWeights,
    kappa_disagreement_weights,
    table_mean_difference,
    table_share_within,
)

if TYPE_CHECKING:  # pandas is only needed for the DataFrame helper
    import pandas as pd


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


def cohen_kappa(judge: Sequence[int], human: Sequence[int], *, weights: KappaWeights = "quadratic",
                scale: tuple[int, int] = (1, 5), n_boot: int = 1000, confidence: float = 0.95,
                seed: int = 0) -> Estimate:
    """Cohen's kappa with a bootstrap CI. Weights follow distance on the scale, so an unused score in the middle
    does not change the weighting (sklearn weights by index among observed labels unless `labels=` is given)."""
    check_bootstrap_args(n_boot, confidence)
    kappa_disagreement_weights(2, weights)  # validate the name early
    pairs = PairedScores(judge, human, None, scale)
    boot = bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None
    return kappa_estimate(pairs, boot, confidence, weights)


def spearman(judge: Sequence[int], human: Sequence[int], *, scale: tuple[int, int] = (1, 5), n_boot: int = 1000,
             confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Spearman's rho (scipy) with a bootstrap CI."""
    check_bootstrap_args(n_boot, confidence)
    pairs = PairedScores(judge, human, None, scale)
    boot = bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None
    return correlation_estimate(pairs, boot, confidence, "spearman")


def kendall(judge: Sequence[int], human: Sequence[int], *, scale: tuple[int, int] = (1, 5), n_boot: int = 1000,
            confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Kendall's tau-b (scipy) with a bootstrap CI."""
    check_bootstrap_args(n_boot, confidence)
    pairs = PairedScores(judge, human, None, scale)
    boot = bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None
    return correlation_estimate(pairs, boot, confidence, "kendall")


def agreement_report(judge: Sequence[float], human: Sequence[float], *, ids: Sequence[str] | None = None,
                     scale: tuple[int, int] = (1, 5), name: str = "", n_boot: int = 1000,
                     confidence: float = 0.95, seed: int = 0, worst_k: int = 10,
                     n_unscored: int = 0) -> AgreementReport:
    """Every judge-vs-human statistic for one rubric, with bootstrap CIs that share one set of resamples. Scores are
    whole numbers on `scale` (a float such as Verdict.score is checked to be one)."""
    check_bootstrap_args(n_boot, confidence)
    pairs = PairedScores(judge, human, ids, scale)
    boot = bootstrap_tables(pairs.table, n_boot, seed) if n_boot and pairs.n >= 2 else None
    estimates = {
        "exact": paired_estimate(pairs, lambda t: table_share_within(t, 0), boot, confidence,
                                  "exact agreement"),
        "within_one": paired_estimate(pairs, lambda t: table_share_within(t, 1), boot, confidence,
                                       "within-±1 agreement"),
        "kappa_quadratic": kappa_estimate(pairs, boot, confidence, "quadratic"),
        "spearman": correlation_estimate(pairs, boot, confidence, "spearman"),
        "kendall": correlation_estimate(pairs, boot, confidence, "kendall"),
        "mean_difference": paired_estimate(pairs, table_mean_difference, boot, confidence,
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
