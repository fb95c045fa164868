"""Adjudication: the items of a task the lead must settle (audit/routing.py says which), everyone's opinion side by
side, and the lead's final label with a reason — append-only, the latest label of an item being the final one.

`final_labels` is what agreement and calibration read (rubriceval/trust/human_scores.py): an adjudicated item's human
label is the lead's, not the experts' median. `review_modes` says which expert scores were given blind.
"""
from __future__ import annotations

import json
import time
from collections import defaultdict

from rubriceval.audit.routing import route
from rubriceval.audit.team import TeamStore
from rubriceval.store.audit import check_score
from rubriceval.store.audit_models import clean_expert_name
from rubriceval.store.team_models import Adjudication, AdjudicationRow, Opinion, TeamError, TeamSaveResult, tags_of


def opinions(store: TeamStore, task: str, item_no: int) -> list[Opinion]:
    """Every assigned expert's current opinion on one item, with whether their score was given blind."""
    info = store.task(task)
    params = {"t": info.task_id, "no": int(item_no)}
    blind = {r["expert"]: bool(r["blind"]) for r in store.query(
        "SELECT expert, blind FROM team_reviews WHERE task_id = :t AND item_no = :no ORDER BY review_id", params)}
    tags: dict[str, list[str]] = defaultdict(list)
    for r in store.query("SELECT expert, failure_tag FROM team_item_tags WHERE task_id = :t AND item_no = :no "
                         f"ORDER BY {store.text_order('failure_tag')}", params):
        tags[r["expert"]].append(r["failure_tag"])
    return [Opinion(expert=r["expert"], state=r["state"], score=r["score"], note=r["note"], tags=tags[r["expert"]],
                    blind=blind.get(r["expert"]) if r["state"] != "open" else None)
            for r in store.query("SELECT expert, state, score, note FROM team_assignments WHERE task_id = :t AND "
                                 f"item_no = :no ORDER BY {store.text_order('expert')}", params)]


def adjudication_queue(store: TeamStore, task: str, *, include_settled: bool = True) -> list[AdjudicationRow]:
    """The items that need the lead, in item order (settled ones too unless include_settled=False)."""
    info = store.task(task)
    params = {"t": info.task_id}
    labels = {r["item_no"]: r["label"] for r in store.query(
        "SELECT item_no, label FROM team_adjudications WHERE task_id = :t ORDER BY adjudication_id", params)}
    by_item: dict[int, list[Opinion]] = defaultdict(list)
    items: dict[int, tuple] = {}
    # SQL keeps the items that could need the lead (someone unsure, or two scores that differ) — a superset;
    # audit/routing.py, the one rule, decides on those.
    for r in store.query(
            "SELECT a.item_no, a.expert, a.state, a.score, ti.sample_id, ti.scorer, ti.judge_score, ti.threshold "
            "FROM team_assignments a JOIN team_task_items ti ON ti.task_id = a.task_id AND ti.item_no = a.item_no "
            "WHERE a.task_id = :t AND a.item_no IN (SELECT item_no FROM team_assignments WHERE task_id = :t "
            "GROUP BY item_no HAVING SUM(CASE WHEN state = 'unsure' THEN 1 ELSE 0 END) > 0 "
            f"OR MAX(score) <> MIN(score)) ORDER BY a.item_no, {store.text_order('a.expert')}", params):
        by_item[r["item_no"]].append(Opinion(expert=r["expert"], state=r["state"], score=r["score"]))
        items[r["item_no"]] = (r["sample_id"], r["scorer"], r["judge_score"], r["threshold"])
    out = []
    for item_no, group in by_item.items():
        sample_id, scorer, judge_score, threshold = items[item_no]
        why = route(group, threshold)
        if why is None or (not include_settled and item_no in labels):
            continue
        scores = ", ".join(f"{o.expert}={o.score if o.state == 'scored' else o.state}" for o in group)
        out.append(AdjudicationRow(item_no=item_no, sample_id=sample_id, scorer=scorer, judge_score=judge_score,
                                   route=why, scores=scores, label=labels.get(item_no),
                                   opinions=group))
    return out


def item_version(store: TeamStore, task_id: str, item_no: int) -> int:
    rows = store.query("SELECT version FROM team_task_items WHERE task_id = :t AND item_no = :no",
                       {"t": task_id, "no": int(item_no)})
    if not rows:
        raise TeamError(f"task has no item {item_no}", field="item")
    return rows[0][0]


def adjudicate(store: TeamStore, task: str, item_no: int, lead: str, *, label: int, reason: str,
               expected_version: int) -> TeamSaveResult:
    """The lead's final label for an item, with a reason; the experts' opinions are kept beside it."""
    lead = clean_expert_name(lead)
    label = check_score(label)
    reason = (reason or "").strip()
    if not reason:
        raise TeamError("a reason is required for the final label", field="reason",
                        hint="say which expert was right and why, so the rubric can say it too")
    info = store.task(task)
    row = store.query("SELECT sample_id, scorer, threshold FROM team_task_items WHERE task_id = :t AND item_no = :no",
                      {"t": info.task_id, "no": int(item_no)})
    if not row:
        raise TeamError(f"task '{info.name}' has no item {item_no}", field="item")
    sample_id, scorer, threshold = row[0]["sample_id"], row[0]["scorer"], row[0]["threshold"]
    seen = opinions(store, info.task_id, item_no)
    why = route(seen, threshold) or "lead_review"
    payload = {"task_id": info.task_id, "item_no": int(item_no), "label": label, "reason": reason, "route": why,
               "opinions": [o.model_dump() for o in seen], "expected_version": expected_version}
    with store.writing() as conn:
        current = conn.execute("SELECT version FROM team_task_items WHERE task_id = :t AND item_no = :no",
                               {"t": info.task_id, "no": int(item_no)}).fetchone()[0]
        if current != int(expected_version):
            store.log(lead, "team_adjudicate", info.run_id, sample_id, scorer, "conflict",
                      {**payload, "current_version": current})
            return TeamSaveResult(ok=False, version=current,
                                  message="another lead settled this item since you opened it; reload it")
        conn.execute(
            "INSERT INTO team_adjudications (task_id, item_no, run_id, sample_id, scorer, lead, label, reason, route, "
            "opinions_json, saved_at) VALUES (:t, :no, :run, :sample, :scorer, :lead, :label, :reason, :route, "
            ":opinions, :at)", {"t": info.task_id, "no": int(item_no), "run": info.run_id, "sample": sample_id,
                                "scorer": scorer, "lead": lead, "label": label, "reason": reason, "route": why,
                                "opinions": json.dumps(payload["opinions"], ensure_ascii=False), "at": time.time()})
        conn.execute("UPDATE team_task_items SET version = version + 1 WHERE task_id = :t AND item_no = :no",
                     {"t": info.task_id, "no": int(item_no)})
        store.audit.bump_version(info.run_id, sample_id, scorer, lead)
        store.log(lead, "team_adjudicate", info.run_id, sample_id, scorer, "saved", payload)
    return TeamSaveResult(ok=True, version=current + 1)


def adjudications(store: TeamStore, task: str, item_no: int | None = None) -> list[Adjudication]:
    """Every adjudication of a task (or of one item), oldest first."""
    info = store.task(task)
    sql = "SELECT * FROM team_adjudications WHERE task_id = :t"
    params: dict[str, object] = {"t": info.task_id}
    if item_no is not None:
        sql, params = sql + " AND item_no = :no", {**params, "no": int(item_no)}
    return [Adjudication(task_id=r["task_id"], item_no=r["item_no"], run_id=r["run_id"], sample_id=r["sample_id"],
                         scorer=r["scorer"], lead=r["lead"], label=r["label"], reason=r["reason"], route=r["route"],
                         opinions=[Opinion(**o) for o in json.loads(r["opinions_json"])], saved_at=r["saved_at"])
            for r in store.query(sql + " ORDER BY adjudication_id", params)]


def final_labels(store: TeamStore, run_id: str, scorer: str) -> dict[str, int]:
    """sample id → the lead's latest final label for this rubric in this run (over all its tasks)."""
    return {r["sample_id"]: r["label"] for r in store.query(
        "SELECT sample_id, label FROM team_adjudications WHERE run_id = :r AND scorer = :s ORDER BY adjudication_id",
        {"r": run_id, "s": scorer})}


def review_modes(store: TeamStore, run_id: str, scorer: str) -> dict[tuple[str, str], tuple[bool, float]]:
    """(sample id, expert) → (was their latest team score given blind, when it was saved)."""
    return {(r["sample_id"], r["expert"]): (bool(r["blind"]), r["saved_at"]) for r in store.query(
        "SELECT sample_id, expert, blind, saved_at FROM team_reviews WHERE run_id = :r AND scorer = :s AND "
        "kind = 'score' ORDER BY review_id", {"r": run_id, "s": scorer})}


def failure_tag_rows(store: TeamStore, run_id: str) -> list[dict]:
    """One row per ticked failure tag: rubric, tag, the sample's intent and tags (for the report's counts)."""
    return [{"scorer": r["scorer"], "failure_tag": r["failure_tag"], "intent": r["intent"],
             "tags": tags_of(r["tags"]), "sample_id": r["sample_id"], "expert": r["expert"]}
            for r in store.query(
                "SELECT ti.scorer, g.failure_tag, ti.intent, ti.tags, ti.sample_id, g.expert FROM team_item_tags g "
                "JOIN team_task_items ti ON ti.task_id = g.task_id AND ti.item_no = g.item_no "
                "JOIN team_tasks t ON t.task_id = g.task_id WHERE t.run_id = :r", {"r": run_id})]
