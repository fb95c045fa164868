"""What appeals teach about a rubric or scorecard and each of its deductions, in one run: how often agents appeal, how often they
win, and the item's precision once accepted appeals are counted as false hits. An item agents keep winning appeals
on is flagged (reports, `rubriceval trust`, `rubriceval appeals stats`).

A hit is a verdict the item deducted on: a failed check for a deduction (the verdict's item_scores; a scorecard's hit
items with negative points), a verdict below the rubric's threshold (a total below the scorecard's pass_total) for
the whole (item ''). An appeal's outcome is its lead's final judgement when
there is one, else the reviewer's decision.
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import rubriceval.audit.scorecard_official  # noqa: F401  (registers the scorecard's deductions)
from rubriceval.audit.official import deductions
from rubriceval.core.item_scores import DETAILS_KEY as ITEM_SCORES
from rubriceval.store.appeal_models import WHOLE_VERDICT, ItemAppealStats
from rubriceval.store.db import Database

# Flag an item when agents won at least this many appeals on it and at least this share of the decided ones: two
# wins keep one odd case from flagging a rubric; half means the item is as often wrong as right when contested.
FLAG_MIN_ACCEPTED = 2
FLAG_ACCEPTANCE = 0.5


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def appeal_stats(conn: Database, run_id: str) -> list[ItemAppealStats]:
    """One row per rubric (item '') and per deduction item that deducted or was appealed, rubric by rubric."""
    if not conn.table_exists("appeals"):
        return []
    thresholds = {r["scorer"]: json.loads(r["definition_json"] or "{}").get("threshold") for r in conn.execute(
        "SELECT scorer, definition_json FROM run_scorers WHERE run_id = ? AND kind = 'rubric'", (run_id,)).fetchall()}
    n_verdicts: dict[str, int] = defaultdict(int)
    hits: dict[tuple[str, str], int] = defaultdict(int)
    for chunk in conn.stream("SELECT scorer, score, details_json FROM verdicts WHERE run_id = ? AND kind = 'rubric'",
                             (run_id,)):
        for scorer, score, details in chunk:
            n_verdicts[scorer] += 1
            threshold = thresholds.get(scorer)
            if score is not None and threshold is not None and score < threshold:
                hits[(scorer, WHOLE_VERDICT)] += 1
            if details and f'"{ITEM_SCORES}"' in details:      # an unscored verdict keeps none: not parsed
                for item in deductions("rubric", json.loads(details)):
                    hits[(scorer, item)] += 1
    if conn.table_exists("scorecard_verdicts"):      # a scorecard: its deductions, and conversations below pass
        cards = {r[0]: json.loads(r[1]).get("pass_total") for r in conn.execute(
            "SELECT scorecard, definition_json FROM scorecard_defs WHERE run_id = ?", (run_id,)).fetchall()}
        for chunk in conn.stream("SELECT scorecard, total, verdict_json FROM scorecard_verdicts WHERE run_id = ?",
                                 (run_id,)):
            for card, total, verdict in chunk:
                n_verdicts[card] += 1
                if total is not None and cards.get(card) is not None and total < cards[card]:
                    hits[(card, WHOLE_VERDICT)] += 1
                for item in deductions("scorecard", json.loads(verdict)):
                    hits[(card, item)] += 1
    appealed: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for r in conn.execute("SELECT scorer, item, state, decision, final_outcome FROM appeals WHERE run_id = ?",
                          (run_id,)).fetchall():
        appealed[(r["scorer"], r["item"])].append(r["final_outcome"] or r["decision"])
    out = []
    for scorer, item in sorted(set(hits) | set(appealed) | {(s, WHOLE_VERDICT) for s in n_verdicts}):
        outcomes = appealed.get((scorer, item), [])
        n_hits = hits.get((scorer, item), 0)
        decided = [o for o in outcomes if o in ("accepted", "rejected")]
        accepted = sum(1 for o in decided if o == "accepted")
        acceptance = _rate(accepted, len(decided))
        flagged = accepted >= FLAG_MIN_ACCEPTED and acceptance is not None and acceptance >= FLAG_ACCEPTANCE
        precision = _rate(max(n_hits - accepted, 0), n_hits)
        why = (f"agents won {accepted} of {len(decided)} decided appeals"
               + (f"; precision {precision:.2f} with them as false hits" if precision is not None else "")
               ) if flagged else ""
        out.append(ItemAppealStats(scorer=scorer, item=item, n_verdicts=n_verdicts.get(scorer, 0), n_hits=n_hits,
                                   n_appealed=len(outcomes), n_decided=len(decided), n_accepted=accepted,
                                   appeal_rate=_rate(len(outcomes), n_hits), acceptance_rate=acceptance,
                                   precision=precision, flagged=flagged, why=why))
    return out



def appeal_flags(conn: Database, run_id: str) -> list[ItemAppealStats]:
    """The flagged rows of `appeal_stats`, read only when the run has appeals (a report's cheap question)."""
    if not conn.table_exists("appeals") or conn.execute("SELECT 1 FROM appeals WHERE run_id = ? LIMIT 1",
                                                        (run_id,)).fetchone() is None:
        return []
    return [row for row in appeal_stats(conn, run_id) if row.flagged]
