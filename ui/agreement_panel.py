"""The agreement panel: how far the judge agrees with the experts, per rubric version, and the experts with each
other. The statistics come from rubriceval.trust.agreement; this module only groups the audit responses.

Each expert response is one judge–human pair (an item audited by two experts counts twice); responses to unscored
verdicts have no judge score and are counted apart, never as a 0.
"""
from __future__ import annotations

from collections import defaultdict

import pandas as pd
from pydantic import BaseModel, Field

from rubriceval import AgreementReport, AuditStore, agreement_report
from rubriceval.store.audit_models import AuditResponse
from rubriceval.trust.agreement import Estimate, krippendorff_alpha

SUMMARY_COLUMNS = ["rubric", "version", "pairs", "exact", "within ±1", "quadratic κ", "Spearman", "judge − human",
                   "items ≥2 experts", "expert α (ordinal)", "unscored", "notes"]
N_BOOT = 1000


class RubricAgreement(BaseModel):
    key: str                               # "scorer @ version", the panel's dropdown value
    scorer: str
    name: str
    version: str
    report: AgreementReport
    experts_alpha: Estimate
    n_multi_expert_items: int
    responses: list[AuditResponse] = Field(default_factory=list)


def _group(responses: list[AuditResponse]) -> dict[tuple[str, str], list[AuditResponse]]:
    groups: dict[tuple[str, str], list[AuditResponse]] = defaultdict(list)
    for r in responses:
        groups[(r.scorer, r.scorer_version)].append(r)
    return dict(sorted(groups.items()))


def _experts_alpha(responses: list[AuditResponse]) -> tuple[Estimate, int]:
    experts = sorted({r.expert for r in responses})
    by_item: dict[str, dict[str, int]] = defaultdict(dict)
    for r in responses:
        by_item[r.sample_id][r.expert] = r.score
    multi = sum(1 for scores in by_item.values() if len(scores) >= 2)
    if len(experts) < 2:
        return Estimate(note="only one expert has audited this rubric"), multi
    matrix = [[scores.get(e) for e in experts] for scores in by_item.values()]
    return krippendorff_alpha(matrix, level="ordinal", n_boot=N_BOOT), multi


def compute(store: AuditStore, run: str) -> list[RubricAgreement]:
    names = {s["scorer"]: (s["definition"].get("name") or s["scorer"]) for s in store.rubric_scorers(run)}
    out = []
    for (scorer, version), responses in _group(store.responses(run)).items():
        paired = [r for r in responses if r.judge_score is not None]
        label = f"{names.get(scorer, scorer)} {version}"
        report = agreement_report([r.judge_score for r in paired], [r.score for r in paired],
                                  ids=[f"{r.sample_id} · {r.expert}" for r in paired], name=label, n_boot=N_BOOT,
                                  worst_k=15, n_unscored=len(responses) - len(paired))
        alpha, multi = _experts_alpha(responses)
        out.append(RubricAgreement(key=f"{scorer} @ {version}", scorer=scorer, name=names.get(scorer, scorer),
                                   version=version, report=report, experts_alpha=alpha, n_multi_expert_items=multi,
                                   responses=responses))
    return out


def _fmt(estimate: Estimate, digits: int = 2) -> str:
    return estimate.format(digits) if estimate.value is not None else "—"


def summary_frame(results: list[RubricAgreement]) -> pd.DataFrame:
    rows = []
    for a in results:
        r = a.report
        notes = [n for n in r.notes if "bootstrap" not in n]
        if a.experts_alpha.value is None and a.n_multi_expert_items:
            notes.append(f"expert α: {a.experts_alpha.note}")
        rows.append([a.name, a.version, r.n, _fmt(r.exact), _fmt(r.within_one), _fmt(r.kappa_quadratic),
                     _fmt(r.spearman), _fmt(r.mean_difference), a.n_multi_expert_items, _fmt(a.experts_alpha),
                     r.n_unscored, "; ".join(notes)])
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def confusion_frame(result: RubricAgreement | None) -> pd.DataFrame:
    """Rows: human score, columns: judge score (as the agreement module defines them)."""
    if result is None:
        return pd.DataFrame()
    frame = result.report.confusion_frame()
    frame.index = [f"human {v}" for v in frame.index]
    frame.columns = [f"judge {v}" for v in frame.columns]
    return frame.reset_index(names="")


def worst_frame(result: RubricAgreement | None) -> pd.DataFrame:
    if result is None:
        return pd.DataFrame(columns=["sample · expert", "judge", "human", "gap", "reason"])
    reasons = {f"{r.sample_id} · {r.expert}": r.reason for r in result.responses}
    return pd.DataFrame([[w.id, w.judge, w.human, w.gap, reasons.get(w.id, "")] for w in result.report.worst_items],
                        columns=["sample · expert", "judge", "human", "gap", "reason"])


def headline(results: list[RubricAgreement]) -> str:
    if not results:
        return "No audits yet: agreement appears once experts have answered some verdicts."
    lines = [f"- {a.report.summary()}" for a in results]
    return "\n".join(lines) + "\n\nEach expert response is one judge–expert pair (\"items\" above counts pairs)."
