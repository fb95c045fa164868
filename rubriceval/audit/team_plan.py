"""A planned audit task's sampling in the store: which items are the random part (stratum, N_h, n_h, weight) and
which are risk-first additions — a table of its own (`team_task_plan`, declared in store/schema.py), one row per
item of a task created with a plan (rubriceval/audit/plan.py), read by `audit-task estimate`."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rubriceval.audit.plan import PlannedItem, SamplingPlan, draw, risk_reasons, stratum_of
from rubriceval.audit.review_priority import rubric_awaiting_reasons
from rubriceval.audit.scored_rows import dataset_keys, dataset_of, has_scorecard_rows
from rubriceval.core.pending_review import DETAILS_KEY as PENDING_KEY
from rubriceval.data.segment_spec import TimeSettings


def plan_items(team: Any, run_id: str, rubric: str, plan: SamplingPlan, seed: int) -> list[PlannedItem]:
    """One rubric's planned items: its verdicts stratified by the plan's segments and period, drawn, plus risks."""
    settings = TimeSettings(zone=plan.zone)
    candidates = team.candidates(run_id, rubric, with_spread="disagreement" in plan.risk)
    wanted = {c.sample_id for c in candidates}
    db = team.conn
    strata: dict[str, str] = {}
    for chunk in dataset_keys(db, dataset_of(db, run_id)):       # a span of samples at a time
        for keys in chunk:
            if keys.sample_id in wanted:
                strata[keys.sample_id] = stratum_of(keys, plan, settings)
    risks: dict[str, list[str]] = {}
    # issue 44: verdicts pending review under the rubric's auto_accept target wait for a reviewer: always added
    for sample_id, details in team.query("SELECT sample_id, details_json FROM verdicts WHERE run_id = :run AND "
                                         "scorer = :scorer AND kind = 'rubric' AND instr(details_json, :mark) > 0",
                                         {"run": run_id, "scorer": rubric, "mark": f'"{PENDING_KEY}"'}):
        if sample_id in wanted and (pending := rubric_awaiting_reasons(json.loads(details or "{}"))):
            risks[sample_id] = pending
    if plan.risk:
        definition = team.definition(run_id, rubric)
        must = {str(i.get("id")) for i in definition.get("items") or [] if isinstance(i, dict) and i.get("must")}
        fatal = {r[0] for r in team.query("SELECT sample_id FROM scorecard_verdicts WHERE run_id = :run AND fatal = 1",
                                          {"run": run_id})} if has_scorecard_rows(db, run_id) else set()
        by_id = {c.sample_id: c for c in candidates}
        disputed = disputed_reviews(team, run_id, rubric, by_id) if "disagreement" in plan.risk else set()
        for r in team.query("SELECT sample_id, details_json, evidence_json FROM verdicts WHERE run_id = :run AND "
                            "scorer = :scorer AND kind = 'rubric'", {"run": run_id, "scorer": rubric}):
            reasons = risk_reasons(json.loads(r[1] or "{}"), json.loads(r[2] or "[]"), by_id[r[0]], must, fatal,
                                   plan, disputed)
            if reasons:
                risks[r[0]] = reasons + risks.get(r[0], [])
    return draw(candidates, strata, plan, seed, risks)


def disputed_reviews(team: Any, run_id: str, rubric: str, candidates: dict[str, Any]) -> set[str]:
    """Samples whose earlier reviews (team tasks on this run) differ by 2 levels or more from each other or from the
    judge's score."""
    scores: dict[str, list[int]] = {}
    for sample_id, score in team.query("SELECT sample_id, score FROM team_reviews WHERE run_id = :run AND "
                                       "scorer = :scorer AND kind = 'score' AND score IS NOT NULL",
                                       {"run": run_id, "scorer": rubric}):
        scores.setdefault(sample_id, []).append(int(score))
    out = set()
    for sample_id, given in scores.items():
        judge = candidates[sample_id].judge_score if sample_id in candidates else None
        values = given + ([judge] if judge is not None else [])
        if max(values) - min(values) >= 2:
            out.add(sample_id)
    return out


def save_plan_rows(conn: Any, task_id: str, items: Sequence[PlannedItem]) -> None:
    """Inside the task's write transaction: one row per item, numbered as the task's items are."""
    conn.executemany("INSERT INTO team_task_plan VALUES (?,?,?,?,?,?,?)",
                     [(task_id, no, i.selection, i.stratum, i.stratum_size, i.stratum_drawn, i.weight)
                      for no, i in enumerate(items, start=1)])


def plan_rows(team: Any, task_id: str) -> dict[int, dict[str, Any]]:
    """item number → its plan row, for a planned task ({} for a task created without a plan)."""
    try:
        rows = team.query("SELECT item_no, selection, stratum, stratum_size, stratum_drawn, weight FROM team_task_plan "
                          "WHERE task_id = :t", {"t": task_id})
    except Exception:                    # no planned task yet in this store: no table
        return {}
    return {r[0]: {"selection": r[1], "stratum": r[2], "stratum_size": r[3], "stratum_drawn": r[4], "weight": r[5]}
            for r in rows}
