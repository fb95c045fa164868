"""Expert corrections of metric verdicts, one statement or one context at a time.

Faithfulness and context recall store a verdict per statement (supported / attributed), context precision and
context utilization one per retrieved context (relevant / used), in the verdict's details (standard_metrics/). An
expert reviews the whole list — confirming a verdict is as much a label as flipping one — and every review is kept
(append-only, `team_metric_corrections`); an expert's latest verdict on an element is their label. The metric's
agreement (audit/metric_agreement.py) compares those labels with the judge's, and recomputes the score with them.
"""
from __future__ import annotations

import json
import time

from pydantic import BaseModel

from rubriceval.audit.team import TeamStore
from rubriceval.store.audit_models import clean_expert_name
from rubriceval.store.team_models import TeamError


class ElementKind(BaseModel):
    text_key: str | None            # details key holding each element's text (None: the sample's contexts)
    verdict_key: str                # details key holding the judge's verdict per element
    unit: str                       # "statement" or "context"


AUDITABLE_METRICS: dict[str, ElementKind] = {
    "faithfulness": ElementKind(text_key="statements", verdict_key="supported", unit="statement"),
    "context_recall": ElementKind(text_key="statements", verdict_key="attributed", unit="statement"),
    "context_precision": ElementKind(text_key=None, verdict_key="verdicts", unit="context"),
    "context_utilization": ElementKind(text_key=None, verdict_key="verdicts", unit="context"),
}


class MetricElement(BaseModel):
    index: int
    text: str
    judge: bool
    expert: bool | None = None      # the asking expert's latest verdict, if any


class MetricLabel(BaseModel):
    sample_id: str
    element: int
    expert: str
    judge: bool
    verdict: bool


def metric_kind(metric: str) -> ElementKind:
    if metric not in AUDITABLE_METRICS:
        raise TeamError(f"metric '{metric}' has no per-statement or per-context verdicts to correct",
                        field="metric", hint="auditable: " + ", ".join(AUDITABLE_METRICS))
    return AUDITABLE_METRICS[metric]


def judge_elements(store: TeamStore, run_id: str, sample_id: str, metric: str) -> list[tuple[str, bool]]:
    """(text, the judge's verdict) per element of one metric verdict, in stored order."""
    kind = metric_kind(metric)
    rows = store.query("SELECT v.details_json, s.sample_json FROM verdicts v JOIN run_samples s ON "
                       "s.run_id = v.run_id AND s.sample_id = v.sample_id WHERE v.run_id = :r AND v.sample_id = :s "
                       "AND v.scorer = :m", {"r": run_id, "s": sample_id, "m": metric})
    if not rows:
        raise TeamError(f"sample '{sample_id}' has no {metric} verdict in this run", field="metric")
    details = json.loads(rows[0]["details_json"] or "{}")
    verdicts = [bool(v) for v in details.get(kind.verdict_key) or []]
    texts = (details.get(kind.text_key) if kind.text_key else json.loads(rows[0]["sample_json"]).get("contexts"))
    texts = [str(t) for t in texts or []]
    return [(texts[i] if i < len(texts) else "", verdict) for i, verdict in enumerate(verdicts)]


def metric_elements(store: TeamStore, run: str, sample_id: str, metric: str, expert: str = "") -> list[MetricElement]:
    run_id = store.audit.resolve(run)
    mine = {label.element: label.verdict for label in metric_labels(store, run_id, metric, sample_id=sample_id)
            if label.expert == expert}
    return [MetricElement(index=i, text=text, judge=judge, expert=mine.get(i))
            for i, (text, judge) in enumerate(judge_elements(store, run_id, sample_id, metric))]


def save_metric_review(store: TeamStore, run: str, sample_id: str, metric: str, *, expert: str,
                       verdicts: dict[int, bool], reason: str = "") -> int:
    """The expert's verdict on each element they reviewed; flipping any of the judge's needs a reason.
    Returns how many elements they flipped."""
    expert = clean_expert_name(expert)
    run_id = store.audit.resolve(run)
    judged = judge_elements(store, run_id, sample_id, metric)
    unknown = [i for i in verdicts if not 0 <= int(i) < len(judged)]
    if unknown or not verdicts:
        raise TeamError(f"{metric} of '{sample_id}' has {len(judged)} {metric_kind(metric).unit}s; "
                        f"got {sorted(verdicts) or 'none'}", field="verdicts")
    flipped = [i for i, v in verdicts.items() if bool(v) != judged[int(i)][1]]
    reason = (reason or "").strip()
    if flipped and not reason:
        raise TeamError(f"a reason is required to change the judge's verdict on {len(flipped)} "
                        f"{metric_kind(metric).unit}(s)", field="reason")
    now = time.time()
    rows = [{"r": run_id, "s": sample_id, "m": metric, "i": int(i), "j": int(judged[int(i)][1]), "v": int(bool(v)),
             "e": expert, "why": reason, "at": now} for i, v in sorted(verdicts.items())]
    with store.writing() as conn:
        conn.executemany("INSERT INTO team_metric_corrections (run_id, sample_id, metric, element, judge_verdict, "
                         "expert_verdict, expert, reason, saved_at) VALUES (:r, :s, :m, :i, :j, :v, :e, :why, :at)",
                         rows)
        store.log(expert, "team_metric_review", run_id, sample_id, metric, "saved",
                  {"verdicts": {str(k): bool(v) for k, v in verdicts.items()}, "flipped": flipped, "reason": reason})
    return len(flipped)


def metric_labels(store: TeamStore, run_id: str, metric: str, *, sample_id: str | None = None) -> list[MetricLabel]:
    """Each expert's latest verdict per element."""
    sql = ("SELECT sample_id, element, expert, judge_verdict, expert_verdict FROM team_metric_corrections "
           "WHERE run_id = :r AND metric = :m")
    params = {"r": run_id, "m": metric}
    if sample_id is not None:
        sql, params = sql + " AND sample_id = :s", {**params, "s": sample_id}
    latest: dict[tuple[str, int, str], MetricLabel] = {}
    for r in store.query(sql + " ORDER BY correction_id", params):
        latest[(r["sample_id"], r["element"], r["expert"])] = MetricLabel(
            sample_id=r["sample_id"], element=r["element"], expert=r["expert"], judge=bool(r["judge_verdict"]),
            verdict=bool(r["expert_verdict"]))
    return list(latest.values())
