"""The agreement panel: how far the judge agrees with the experts, per rubric version, and the experts with each
other. Items, human labels and statistics come from rubriceval.trust.human_scores — the one path `rubriceval agree`,
calibration and the trust gate take: each audited item counts once, its human score is a lead's adjudicated label,
else the experts' consensus (AuditedItem.human_score); unscored verdicts are counted apart, never as a 0.
"""
from __future__ import annotations

import pandas as pd
from pydantic import BaseModel, Field

from rubriceval import AuditStore
from rubriceval.i18n import Lang, t
from rubriceval.stats.agreement import Estimate
from rubriceval.trust.human_scores import AuditedItem, RubricAgreementReport, audit_agreement, audited_items

# Column ids, said by the catalogue's ui_col_<id> in the page's language (English: the headers as they always were)
SUMMARY_IDS = ("rubric", "version", "items", "exact", "within_one", "kappa", "spearman", "difference", "multi_expert",
               "experts_alpha", "unscored", "notes")
WORST_IDS = ("sample", "judge", "human", "gap", "reasons")


def columns(ids: tuple[str, ...], lang: Lang = "en") -> list[str]:
    return [t(f"ui_col_{i}", lang) for i in ids]


SUMMARY_COLUMNS = columns(SUMMARY_IDS)
WORST_COLUMNS = columns(WORST_IDS)
N_BOOT = 1000
WORST_ITEMS = 15


class RubricAgreement(BaseModel):
    key: str                               # "scorer @ version", the panel's dropdown value
    scorer: str
    name: str
    version: str
    report: RubricAgreementReport
    experts_alpha: Estimate
    n_multi_expert_items: int
    items: list[AuditedItem] = Field(default_factory=list)


def compute(store: AuditStore, run: str) -> list[RubricAgreement]:
    run_id = store.resolve(run)
    out = []
    for scorer in sorted(store.rubric_scorers(run_id), key=lambda s: s["scorer"]):
        audited = audited_items(store.path, scorer["scorer"], run=run_id)
        if not audited.items:
            continue
        report = audit_agreement(audited, n_boot=N_BOOT, worst_k=WORST_ITEMS)
        name = scorer["definition"].get("name") or scorer["scorer"]
        experts = report.experts
        alpha = experts.alpha_ordinal if experts is not None else Estimate(note="no item has two experts' scores")
        out.append(RubricAgreement(key=f"{audited.rubric_id} @ {audited.version_tag}", scorer=audited.rubric_id,
                                   name=name, version=audited.version_tag, report=report, experts_alpha=alpha,
                                   n_multi_expert_items=experts.n_items if experts is not None else 0,
                                   items=audited.items))
    return out


def _fmt(estimate: Estimate, digits: int = 2) -> str:
    return estimate.format(digits) if estimate.value is not None else "—"


def summary_frame(results: list[RubricAgreement], lang: Lang = "en") -> pd.DataFrame:
    rows = []
    for a in results:
        r = a.report
        notes = [n for n in r.notes if "bootstrap" not in n]
        if a.experts_alpha.value is None and a.n_multi_expert_items:
            notes.append(f"expert α: {a.experts_alpha.note}")
        rows.append([a.name, a.version, r.n, _fmt(r.exact), _fmt(r.within_one), _fmt(r.kappa_quadratic),
                     _fmt(r.spearman), _fmt(r.mean_difference), a.n_multi_expert_items, _fmt(a.experts_alpha),
                     r.n_unscored, "; ".join(notes)])
    return pd.DataFrame(rows, columns=columns(SUMMARY_IDS, lang))


def confusion_frame(result: RubricAgreement | None, lang: Lang = "en") -> pd.DataFrame:
    """Rows: human score, columns: judge score (as the agreement module defines them)."""
    if result is None:
        return pd.DataFrame()
    frame = result.report.confusion_frame()
    frame.index = [t("ui_agreement_human_row", lang, score=v) for v in frame.index]
    frame.columns = [t("ui_agreement_judge_col", lang, score=v) for v in frame.columns]
    return frame.reset_index(names="")


def worst_frame(result: RubricAgreement | None, lang: Lang = "en") -> pd.DataFrame:
    if result is None:
        return pd.DataFrame(columns=columns(WORST_IDS, lang))
    reasons = {item.key: "; ".join(f"{expert}: {why}" for expert, why in sorted(item.reasons.items()))
               for item in result.items}
    return pd.DataFrame([[w.id, w.judge, w.human, w.gap, reasons.get(w.id, "")] for w in result.report.worst_items],
                        columns=columns(WORST_IDS, lang))


def headline(results: list[RubricAgreement], lang: Lang = "en") -> str:
    if not results:
        return t("ui_agreement_none", lang)
    lines = [f"- {a.report.summary()}" for a in results]
    return "\n".join(lines) + "\n\n" + t("ui_agreement_rule", lang)
