"""A metric's agreement with the experts who corrected its verdicts statement by statement (or context by context).

Two views of the same corrections: per element, the judge's yes/no against each expert's (accuracy, Cohen's κ,
precision/recall, with bootstrap CIs — stats/agreement/binary.py); per sample, the metric's score recomputed with
the experts' verdicts in place of the judge's (the majority of experts on an element; a tie keeps the judge's), and
how far it moves.
"""
from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, Field

from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_metrics import judge_elements, metric_kind, metric_labels
from rubriceval.standard_metrics.formulas import average_precision
from rubriceval.stats.agreement import BinaryAgreementReport, binary_agreement_report


class MetricAgreement(BaseModel):
    metric: str
    unit: str                                     # statement | context
    elements: BinaryAgreementReport               # one pair per (element, expert)
    n_samples: int
    mean_abs_change: float | None                 # mean |judge score − corrected score| over the reviewed samples
    corrected: dict[str, tuple[float, float]] = Field(default_factory=dict)   # sample → (judge score, corrected)

    def summary(self) -> str:
        change = "—" if self.mean_abs_change is None else f"{self.mean_abs_change:.3f}"
        return (f"{self.metric}: {self.elements.summary()} ({self.unit}s, expert corrections); "
                f"{self.n_samples} samples reviewed, mean |score change| {change}")


def metric_score(metric: str, verdicts: list[bool]) -> float:
    """The metric's formula over per-element verdicts (faithfulness/recall: share true; precision: AP)."""
    if metric_kind(metric).unit == "context":
        return average_precision([int(v) for v in verdicts])
    return sum(verdicts) / len(verdicts) if verdicts else 0.0


def metric_agreement(store: TeamStore, run: str, metric: str, *, n_boot: int = 1000, seed: int = 0
                     ) -> MetricAgreement:
    run_id = store.audit.resolve(run)
    labels = metric_labels(store, run_id, metric)
    ordered = sorted(labels, key=lambda label: (label.sample_id, label.element, label.expert))
    report = binary_agreement_report([label.judge for label in ordered], [label.verdict for label in ordered],
                                     ids=[f"{label.sample_id}#{label.element + 1} · {label.expert}" for label in ordered],
                                     name=metric, n_boot=n_boot, seed=seed)
    votes: dict[str, dict[int, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for label in labels:
        votes[label.sample_id][label.element].append(label.verdict)
    corrected: dict[str, tuple[float, float]] = {}
    for sample_id, by_element in votes.items():
        judged = [verdict for _, verdict in judge_elements(store, run_id, sample_id, metric)]
        fixed = list(judged)
        for element, said in by_element.items():
            yes = sum(said)
            if yes * 2 != len(said):
                fixed[element] = yes * 2 > len(said)
        corrected[sample_id] = (metric_score(metric, judged), metric_score(metric, fixed))
    changes = [abs(a - b) for a, b in corrected.values()]
    return MetricAgreement(metric=metric, unit=metric_kind(metric).unit, elements=report, n_samples=len(corrected),
                           mean_abs_change=sum(changes) / len(changes) if changes else None, corrected=corrected)
