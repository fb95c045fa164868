"""Estimates from a planned audit task (rubriceval/audit/plan.py): from the random part only, each reviewed item
weighted by N_h / n_h (Hájek: Σ w·x / Σ w), the experts' pass rate, the judge's pass rate on the same items and the
judge–expert agreement (exact level, and pass/fail) — unbiased for the run although strata were sampled at different
rates; unweighted figures beside them, and the risk-first additions apart (reviewed, never in the estimates).

An item's expert label is the lead's adjudication when there is one, else the median of its experts' scores (half
up). Items not reviewed yet are left out, and the output says how many.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from rubriceval.audit.team_plan import plan_rows
from rubriceval.store.team_models import TeamError

STATEMENT = ("Estimates use the random part only, each item weighted by N_h/n_h (its stratum's verdicts over those "
             "drawn): unbiased for the run. Risk-first additions are shown apart and are not in the estimates.")


class Rate(BaseModel):
    weighted: float | None = None
    unweighted: float | None = None


class PlanEstimate(BaseModel):
    scorer: str
    n_random: int                 # random items in the task
    n_random_reviewed: int
    population: float             # Σ weights of the reviewed random items (≈ the verdicts they stand for)
    expert_pass_rate: Rate
    judge_pass_rate: Rate
    exact_agreement: Rate
    pass_agreement: Rate
    n_risk: int
    n_risk_reviewed: int
    risk_exact_agreement: float | None = None
    risk_by_kind: dict[str, int] = {}


def _label(scores: Sequence[int], adjudicated: int | None) -> int | None:
    if adjudicated is not None:
        return adjudicated
    if not scores:
        return None
    return int(math.floor(statistics.median(scores) + 0.5))


def _rate(pairs: Sequence[tuple[float, bool]]) -> Rate:
    if not pairs:
        return Rate()
    total = sum(w for w, _ in pairs)
    return Rate(weighted=sum(w for w, x in pairs if x) / total, unweighted=sum(1 for _, x in pairs if x) / len(pairs))


def plan_estimates(team: Any, task: str) -> list[PlanEstimate]:
    info = team.task(task)
    plan = plan_rows(team, info.task_id)
    if not plan:
        raise TeamError(f"task '{info.name}' was not created with a sampling plan", field="task",
                        hint="audit-task create … --plan '5% per agent_id per week, min 3'")
    items = team.query("SELECT item_no, sample_id, scorer, judge_score, threshold FROM team_task_items "
                       "WHERE task_id = :t ORDER BY item_no", {"t": info.task_id})
    scores: dict[int, list[int]] = {}
    for r in team.query("SELECT item_no, score FROM team_assignments WHERE task_id = :t AND state = 'scored' "
                        "AND score IS NOT NULL", {"t": info.task_id}):
        scores.setdefault(r[0], []).append(int(r[1]))
    adjudicated = {r[0]: int(r[1]) for r in team.query(
        "SELECT item_no, label FROM team_adjudications WHERE task_id = :t ORDER BY adjudication_id", {"t": info.task_id})}
    out: dict[str, dict[str, Any]] = {}
    for item_no, _sample, scorer, judge, threshold in items:
        row = plan[item_no]
        acc = out.setdefault(scorer, {"random": [], "risk": [], "n_random": 0, "n_risk": 0, "kinds": {}})
        label = _label(scores.get(item_no, []), adjudicated.get(item_no))
        if row["selection"] == "random":
            acc["n_random"] += 1
        else:
            acc["n_risk"] += 1
            for kind in row["selection"].removeprefix("risk:").split(","):
                acc["kinds"][kind] = acc["kinds"].get(kind, 0) + 1
        if label is None or judge is None:
            continue
        judge_level = int(math.floor(judge + 0.5))
        fact = (label, judge_level, label >= threshold, judge >= threshold)
        if row["selection"] == "random":
            acc["random"].append((float(row["weight"]), fact))
        else:
            acc["risk"].append(fact)
    estimates = []
    for scorer, acc in out.items():
        random_part, risk = acc["random"], acc["risk"]
        estimates.append(PlanEstimate(
            scorer=scorer, n_random=acc["n_random"], n_random_reviewed=len(random_part),
            population=sum(w for w, _ in random_part),
            expert_pass_rate=_rate([(w, f[2]) for w, f in random_part]),
            judge_pass_rate=_rate([(w, f[3]) for w, f in random_part]),
            exact_agreement=_rate([(w, f[0] == f[1]) for w, f in random_part]),
            pass_agreement=_rate([(w, f[2] == f[3]) for w, f in random_part]),
            n_risk=acc["n_risk"], n_risk_reviewed=len(risk),
            risk_exact_agreement=sum(1 for f in risk if f[0] == f[1]) / len(risk) if risk else None,
            risk_by_kind=acc["kinds"]))
    return estimates


def format_estimates(estimates: Sequence[PlanEstimate]) -> str:
    from rubriceval.common.tables import text_table

    def pct(rate: Rate) -> str:
        if rate.weighted is None:
            return "n/a"
        return f"{rate.weighted:.1%} (unweighted {rate.unweighted:.1%})"
    rows = [[e.scorer, f"{e.n_random_reviewed}/{e.n_random}", f"{e.population:.0f}", pct(e.expert_pass_rate),
             pct(e.judge_pass_rate), pct(e.exact_agreement), pct(e.pass_agreement),
             f"{e.n_risk_reviewed}/{e.n_risk} " + ", ".join(f"{k} {v}" for k, v in e.risk_by_kind.items()),
             "n/a" if e.risk_exact_agreement is None else f"{e.risk_exact_agreement:.1%}"] for e in estimates]
    table = text_table(["rubric", "random reviewed", "stands for", "expert pass rate", "judge pass rate",
                        "exact agreement", "pass/fail agreement", "risk-first reviewed", "risk exact agreement"], rows)
    return f"{table}\n\n{STATEMENT}\n"
