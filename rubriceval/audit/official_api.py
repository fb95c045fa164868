"""The Python API's official scores of a stored run: one row per rubric or metric verdict (audit/official.py) and one
per scorecard verdict, its total by the one official rule (audit/scorecard_official.py) — the same totals as the
report, trend, gate and the team app's pages."""
from __future__ import annotations

from typing import Any

import pandas as pd

from rubriceval.audit.official import official_scores as verdict_scores
from rubriceval.audit.scorecard_official import CardDecisions, official_pairs
from rubriceval.store.runs import RunStore
from rubriceval.store.scorecards import ScorecardStore


def scorecard_rows(runs: Any, run_id: str) -> list[dict[str, Any]]:
    """A row per scorecard verdict: the stored total and the official one."""
    machine = {(v.sample_id, v.scorecard): v.totals.total for v in ScorecardStore(runs).verdicts(run_id)}
    if not machine:
        return []
    decisions = CardDecisions.load(runs, run_id)
    rows = []
    for v, human in official_pairs(runs, run_id):
        key = (v.sample_id, v.scorecard)
        latest = decisions.latest(key) if human else None
        rows.append({"sample_id": v.sample_id, "scorer": v.scorecard, "machine_score": machine.get(key),
                     "official_score": v.totals.total, "human_decided": human,
                     "decided_by": latest[0] if latest else "machine", "decider": latest[1] if latest else None,
                     "decided_at": latest[2] if latest else None, "decision_reason": None,
                     "corrected_after_scoring": False})
    return rows


def official_scores(store: Any, run: str = "latest", *, machine_only: bool = False) -> pd.DataFrame:
    """One row per verdict (rubrics, metrics) and per scorecard verdict: machine score, official score, whether a
    human decided it, who, when, why."""
    runs = store if isinstance(store, RunStore) else RunStore(store)
    try:
        run_id = runs.resolve(run)
        frame = verdict_scores(runs, run_id, machine_only=machine_only)
        cards = [] if machine_only else scorecard_rows(runs, run_id)
        if not cards:
            return frame
        return pd.concat([frame, pd.DataFrame(cards, columns=frame.columns, dtype=object)], ignore_index=True)
    finally:
        if runs is not store:
            runs.close()
