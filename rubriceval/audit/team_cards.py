"""Review tasks over scorecards (issue 40): a lead samples conversations' card verdicts with the same plan, strata,
weights and risk-first additions as rubric tasks (audit/plan.py, team_plan.py); each sampled conversation is one task
item (scorer = the card's id) in the same tables (`team_task_items`, `team_assignments`, `team_reviews`), so queues,
progress, deadlines and `audit-task list` work alike — one review model for rubric and card reviews.

A reviewer decides EVERY item of the card (hit, clear, N/A) before the machine's decisions are shown (blind: the
machine's statuses reach them only once they saved; `judge_shown`, the one rule of team.py). Their decisions become
the scorecard reviews every report reads (audit/scorecard_reviews.py), relative to the machine's outcome: a hit on a
hit is confirm, clear on a hit reject, a hit where the machine did not hit missed, N/A na. Their statuses are kept in
`team_reviews.tags` ('|item=status|…|') and their total (the card's arithmetic) in `team_reviews.score`.

Reviewers who differ on an item go to the lead (`card_disagreements`); the lead's status is recorded as their review
(note ADJUDICATION_NOTE), the latest decision, so it is the official one (audit/scorecard_official.py).
"""
from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from rubriceval.audit.plan import PlannedItem, SamplingPlan, draw, stratum_of
from rubriceval.audit.review_priority import awaiting_reasons, top_p_yes
from rubriceval.audit.scorecard_official import ADJUDICATION_NOTE
from rubriceval.audit.scorecard_reviews import ReviewStore
from rubriceval.audit.scored_rows import dataset_keys, dataset_of
from rubriceval.data.segment_spec import TimeSettings
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import ScorecardVerdict
from rubriceval.store.team_models import Candidate, TeamError, TeamSaveResult, tag_field, tags_of

STATUSES = ("hit", "clear", "not_applicable")
LOW_P = 0.2                   # a question item answered with p(yes) within 0.5 ± this is a low-confidence verdict


def run_cards(team: Any, run_id: str) -> dict[str, Scorecard]:
    """The run's scorecards by id ({} when it has none)."""
    if not team.conn.table_exists("scorecard_defs"):
        return {}
    return {str(r[0]): Scorecard.model_validate_json(r[1]) for r in team.query(
        "SELECT scorecard, definition_json FROM scorecard_defs WHERE run_id = :r", {"r": run_id})}


def card_verdict(team: Any, run_id: str, sample_id: str, card_id: str) -> ScorecardVerdict:
    rows = team.query("SELECT verdict_json FROM scorecard_verdicts WHERE run_id = :r AND sample_id = :s AND "
                      "scorecard = :c", {"r": run_id, "s": sample_id, "c": card_id})
    if not rows:
        raise TeamError(f"sample '{sample_id}' has no '{card_id}' scorecard verdict", field="sample")
    return ScorecardVerdict.model_validate_json(rows[0][0])


def card_candidates(team: Any, run_id: str, card_id: str) -> list[Candidate]:
    """The run's verdicts of one card, their total as the 'judge score', with their sample's tags and intent."""
    samples = {r[0]: json.loads(r[1]) for r in team.query(
        "SELECT s.sample_id, s.sample_json FROM run_samples s WHERE s.run_id = :r AND EXISTS (SELECT 1 FROM "
        "scorecard_verdicts v WHERE v.run_id = s.run_id AND v.sample_id = s.sample_id AND v.scorecard = :c)",
        {"r": run_id, "c": card_id})}
    out = []
    for r in team.query("SELECT sample_id, total FROM scorecard_verdicts WHERE run_id = :r AND scorecard = :c",
                        {"r": run_id, "c": card_id}):
        sample = samples.get(r[0], {})
        out.append(Candidate(sample_id=r[0], scorer=card_id, judge_score=r[1],
                             tags=[str(t).replace("|", "/") for t in sample.get("tags") or []],
                             intent=str(sample.get("intent") or "")))
    return out


def card_risks(verdict: ScorecardVerdict, plan: SamplingPlan, disputed: set[str]) -> list[str]:
    """Why a card verdict is a risk-first addition of the plan's kinds: a fatal hit, an unscored item or a question
    answered near 50/50, reviewers of an earlier task who differed on one of its items. (Items awaiting review and
    each item's top p(yes) are added whatever the plan's kinds: audit/review_priority.py.)"""
    reasons: list[str] = []
    for kind in plan.risk:
        if kind == "fatal" and verdict.totals.fatal:
            reasons.append(kind)
        elif kind == "low_confidence" and (verdict.totals.unscored or any(
                o.p_yes is not None and abs(o.p_yes - 0.5) < LOW_P for o in verdict.outcomes)):
            reasons.append(kind)
        elif kind == "disagreement" and verdict.sample_id in disputed:
            reasons.append(kind)
    return reasons


def card_plan_items(team: Any, run_id: str, card_id: str, plan: SamplingPlan, seed: int) -> list[PlannedItem]:
    """One card's planned items: its verdicts stratified by the plan's segments and period, drawn, plus risks: the
    plan's risk kinds, every verdict with an item awaiting review, and each judgement item's top p(yes) per period
    (audit/review_priority.py) — one sampler, each conversation once with all its reasons."""
    settings = TimeSettings(zone=plan.zone)
    candidates = card_candidates(team, run_id, card_id)
    wanted = {c.sample_id for c in candidates}
    strata: dict[str, str] = {}
    periods: dict[str, str] = {}
    by_period = plan.model_copy(update={"per": []})
    for chunk in dataset_keys(team.conn, dataset_of(team.conn, run_id)):
        for keys in chunk:
            if keys.sample_id in wanted:
                strata[keys.sample_id] = stratum_of(keys, plan, settings)
                periods[keys.sample_id] = stratum_of(keys, by_period, settings)
    verdicts = [ScorecardVerdict.model_validate_json(r[0]) for r in team.query(
        "SELECT verdict_json FROM scorecard_verdicts WHERE run_id = :r AND scorecard = :c",
        {"r": run_id, "c": card_id})]
    disputed = {d.sample_id for d in _earlier_disagreements(team, run_id, card_id)} if plan.risk else set()
    card = run_cards(team, run_id).get(card_id)
    ranked = top_p_yes(card, verdicts, periods, plan.top_p_yes) if card is not None else {}
    risks: dict[str, list[str]] = {}
    for verdict in verdicts:
        reasons = [*card_risks(verdict, plan, disputed), *awaiting_reasons(verdict),
                   *ranked.get(verdict.sample_id, [])]
        if reasons:
            risks[verdict.sample_id] = reasons
    return draw(candidates, strata, plan, seed, risks)


# -- a reviewer's item ----------------------------------------------------------------------------------------------
class CardTaskItem(BaseModel):
    """What a reviewer sees of one card task item: every card item by name, their own statuses, and the machine's
    only once shown (blind until they saved)."""

    task_id: str
    item_no: int
    run_id: str
    sample_id: str
    scorecard: str
    card_name: str
    items: list[tuple[str, str]]                 # (item id, its name on the card), in the card's order
    mine: dict[str, str] = {}                    # item → the reviewer's saved status
    machine: dict[str, str] | None = None        # item → the machine's status; None while hidden
    machine_total: int | None = None
    my_total: int | None = None
    version: int
    state: str
    judge_shown: bool


def machine_status(outcome: Any) -> str:
    """The machine's status as a reviewer is shown it once saved: a decision pending review says so (pending_hit,
    pending_clear); undecided stays undecided."""
    if outcome.awaiting_review and outcome.status in ("hit", "clear"):
        return f"pending_{outcome.status}"
    return str(outcome.status)


def statuses_of(tags: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in tags_of(tags) if "=" in part)


def open_card_item(team: Any, task: str, item_no: int, expert: str) -> CardTaskItem:
    """One item of `expert`'s share of a card task (refused when it is not theirs, as every queue item)."""
    a = team.assignment(task, item_no, expert)
    card = run_cards(team, a.run_id).get(a.scorer)
    if card is None:
        raise TeamError(f"item {item_no} of this task is not a scorecard verdict", field="item")
    verdict = card_verdict(team, a.run_id, a.sample_id, a.scorer)
    saved = team.query("SELECT tags FROM team_reviews WHERE task_id = :t AND item_no = :no AND expert = :e AND "
                       "kind = 'score' ORDER BY review_id DESC LIMIT 1", {"t": a.task_id, "no": a.item_no, "e": expert})
    mine = statuses_of(saved[0][0]) if saved else {}
    my_total = a.score if a.state == "scored" else None
    return CardTaskItem(task_id=a.task_id, item_no=a.item_no, run_id=a.run_id, sample_id=a.sample_id,
                        scorecard=card.id, card_name=card.name or card.id,
                        items=[(i.id, i.label) for i in card.items], mine=mine,
                        machine={o.item: machine_status(o) for o in verdict.outcomes} if a.judge_shown else None,
                        machine_total=verdict.totals.total if a.judge_shown else None, my_total=my_total,
                        version=a.version, state=a.state, judge_shown=a.judge_shown)


def review_decision(machine_status: str, status: str, waiting: bool = False) -> str | None:
    """A reviewer's status as a scorecard review of the machine's outcome (None: they agree on a non-hit). waiting:
    the machine's outcome awaits review (undecided, or pending review): every status is then a decision, so the
    item is decided and the official total counts (audit/scorecard_official.py)."""
    if status == "not_applicable":
        return None if machine_status == "not_applicable" and not waiting else "na"
    if machine_status == "hit":
        return "confirm" if status == "hit" else "reject"
    if status == "hit":
        return "missed"
    return "clear" if machine_status in ("not_applicable", "undecided") or waiting else None


def _check_statuses(card: Scorecard, statuses: Mapping[str, str]) -> dict[str, str]:
    ids = [i.id for i in card.items]
    unknown = sorted(set(statuses) - set(ids))
    if unknown:
        raise TeamError(f"scorecard '{card.id}' has no item {', '.join(unknown)}", field="items")
    missing = [i for i in ids if not statuses.get(i)]
    if missing:
        raise TeamError(f"decide every item of the card first: {', '.join(missing)} undecided", field="items",
                        hint="hit, clear or not_applicable for each")
    bad = sorted({s for s in statuses.values() if s not in STATUSES})
    if bad:
        raise TeamError(f"status {', '.join(bad)}: use hit, clear or not_applicable", field="items")
    return {i: statuses[i] for i in ids}


def save_card_review(team: Any, task: str, item_no: int, expert: str, statuses: Mapping[str, str], *,
                     expected_version: int, note: str = "") -> TeamSaveResult:
    """An expert's decision on every item of one conversation's card: the scorecard reviews the reports read, their
    total by the card's arithmetic, and the assignment scored (the machine's decisions are shown from now on)."""
    a = team.assignment(task, item_no, expert)
    card = run_cards(team, a.run_id).get(a.scorer)
    if card is None:
        raise TeamError(f"item {item_no} of this task is not a scorecard verdict", field="item")
    decided = _check_statuses(card, statuses)
    verdict = card_verdict(team, a.run_id, a.sample_id, a.scorer)
    machine = {o.item: o.status for o in verdict.outcomes}
    waiting = {o.item for o in verdict.outcomes if o.awaiting_review}
    outcomes = [o.model_copy(update={"status": decided[o.item], "occurrences": max(1, o.occurrences)
                                     if decided[o.item] == "hit" else 0, "pending_review": False})
                for o in verdict.outcomes]
    total = scorecard_total(card, outcomes).total
    tags = [f"{i}={s}" for i, s in decided.items()]
    with team.writing() as conn:
        row = conn.execute("SELECT version, state FROM team_assignments WHERE task_id = :t AND item_no = :no AND "
                           "expert = :e", {"t": a.task_id, "no": a.item_no, "e": a.expert}).fetchone()
        payload = {"task_id": a.task_id, "item_no": a.item_no, "statuses": decided, "total": total}
        if row["version"] != int(expected_version):
            team.log(a.expert, "team_card_review", a.run_id, a.sample_id, a.scorer, "conflict", payload)
            return TeamSaveResult(ok=False, version=row["version"],
                                  message="this item changed since you opened it (another window?); reload it")
        now = time.time()
        blind = a.blind_task and row["state"] != "scored"
        conn.execute("INSERT INTO team_reviews (task_id, item_no, run_id, sample_id, scorer, expert, kind, score, "
                     "note, tags, blind, saved_at) VALUES (:t, :no, :run, :sample, :scorer, :e, 'score', :score, "
                     ":note, :tags, :blind, :at)",
                     {"t": a.task_id, "no": a.item_no, "run": a.run_id, "sample": a.sample_id, "scorer": a.scorer,
                      "e": a.expert, "score": total, "note": note, "tags": tag_field(tags), "blind": int(blind),
                      "at": now})
        conn.execute("UPDATE team_assignments SET state = 'scored', score = :score, note = :note, "
                     "version = version + 1, updated_at = :at WHERE task_id = :t AND item_no = :no AND expert = :e",
                     {"score": total, "note": note, "at": now, "t": a.task_id, "no": a.item_no, "e": a.expert})
        team.log(a.expert, "team_card_review", a.run_id, a.sample_id, a.scorer, "saved", {**payload, "blind": blind})
    reviews = ReviewStore(team.audit.runs)
    for item, status in decided.items():
        decision = review_decision(machine[item], status, item in waiting)
        if decision is not None:
            reviews.add(a.run_id, verdict, item, decision, reviewer=a.expert,   # type: ignore[arg-type]
                        note=f"task {a.task_id} #{a.item_no}" + (f": {note}" if note else ""))
    return TeamSaveResult(ok=True, version=row["version"] + 1)


# -- the lead: disagreements and adjudication ---------------------------------------------------------------------
class CardDisagreement(BaseModel):
    task_id: str
    item_no: int
    sample_id: str
    scorecard: str
    item: str
    item_name: str
    machine: str
    opinions: dict[str, str]                     # expert → status
    adjudicated: str | None = None               # the lead's status, once given


def _opinions(team: Any, where: str, params: dict[str, Any]) -> dict[tuple[str, int], dict[str, dict[str, str]]]:
    """(task, item no) → expert → their latest statuses."""
    out: dict[tuple[str, int], dict[str, dict[str, str]]] = {}
    for r in team.query(f"SELECT task_id, item_no, expert, tags FROM team_reviews WHERE {where} AND kind = 'score' "
                        "ORDER BY review_id", params):
        statuses = statuses_of(r[3])
        if statuses:
            out.setdefault((r[0], r[1]), {})[r[2]] = statuses
    return out


def _earlier_disagreements(team: Any, run_id: str, card_id: str) -> list[CardDisagreement]:
    found: list[CardDisagreement] = []
    for (task_id, item_no), by_expert in _opinions(team, "run_id = :r AND scorer = :c",
                                                   {"r": run_id, "c": card_id}).items():
        found += _split(team, task_id, item_no, by_expert, {}, {})
    return found


def _split(team: Any, task_id: str, item_no: int, by_expert: dict[str, dict[str, str]], names: dict[str, str],
           machine: dict[str, str]) -> list[CardDisagreement]:
    if len(by_expert) < 2:
        return []
    rows = team.query("SELECT sample_id, scorer FROM team_task_items WHERE task_id = :t AND item_no = :no",
                      {"t": task_id, "no": item_no})
    out = []
    items = sorted({i for statuses in by_expert.values() for i in statuses})
    for item in items:
        said = {e: s[item] for e, s in by_expert.items() if item in s}
        if len(set(said.values())) > 1:
            out.append(CardDisagreement(task_id=task_id, item_no=item_no, sample_id=rows[0][0], scorecard=rows[0][1],
                                        item=item, item_name=names.get(item, item), machine=machine.get(item, ""),
                                        opinions=said))
    return out


def card_disagreements(team: Any, task: str) -> list[CardDisagreement]:
    """The card items of a task its reviewers decided differently, with the lead's status once adjudicated."""
    info = team.task(task)
    cards = run_cards(team, info.run_id)
    adjudicated = {(r.sample_id, r.scorecard, r.item): r for r in ReviewStore(team.audit.runs).reviews(info.run_id)
                   if r.note.startswith(ADJUDICATION_NOTE + f"task {info.task_id}")}
    out = []
    for (_, item_no), by_expert in sorted(_opinions(team, "task_id = :t", {"t": info.task_id}).items()):
        for d in _split(team, info.task_id, item_no, by_expert, {}, {}):
            card = cards.get(d.scorecard)
            verdict = card_verdict(team, info.run_id, d.sample_id, d.scorecard)
            d.item_name = next((i.label for i in card.items if i.id == d.item), d.item) if card else d.item
            d.machine = next((o.status for o in verdict.outcomes if o.item == d.item), "")
            lead = adjudicated.get((d.sample_id, d.scorecard, d.item))
            if lead is not None:
                d.adjudicated = _status_of(d.machine, lead.decision)
            out.append(d)
    return out


def _status_of(machine: str, decision: str) -> str:
    return {"confirm": "hit", "reject": "clear", "missed": "hit", "na": "not_applicable", "clear": "clear"}.get(
        decision, machine)


def adjudicate_card_item(team: Any, task: str, item_no: int, item: str, status: str, *, lead: str,
                         reason: str = "") -> None:
    """A lead's status for one card item reviewers differed on: recorded as the latest review (the official one)."""
    info = team.task(task)
    if status not in STATUSES:
        raise TeamError(f"status {status!r}: use hit, clear or not_applicable", field="status")
    rows = team.query("SELECT sample_id, scorer FROM team_task_items WHERE task_id = :t AND item_no = :no",
                      {"t": info.task_id, "no": int(item_no)})
    if not rows:
        raise TeamError(f"task '{info.name}' has no item {item_no}", field="item_no")
    verdict = card_verdict(team, info.run_id, rows[0][0], rows[0][1])
    outcome = next((o for o in verdict.outcomes if o.item == item), None)
    if outcome is None:
        raise TeamError(f"scorecard '{verdict.scorecard}' has no item '{item}'", field="item")
    machine = outcome.status
    decision = review_decision(machine, status, outcome.awaiting_review) or ("confirm" if machine == "hit" else "clear")
    if decision == "clear" and machine == "clear":
        decision = "clear"                       # a lead re-affirming the machine's clear over a reviewer's missed
    ReviewStore(team.audit.runs).add(info.run_id, verdict, item, decision,  # type: ignore[arg-type]
                                     reviewer=lead, note=f"{ADJUDICATION_NOTE}task {info.task_id} #{item_no}"
                                     + (f": {reason}" if reason else ""))
    with team.writing():
        team.log(lead, "team_card_adjudicate", info.run_id, verdict.sample_id, verdict.scorecard, "saved",
                 {"task_id": info.task_id, "item_no": int(item_no), "item": item, "status": status,
                  "reason": reason})
