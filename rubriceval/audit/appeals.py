"""Appeals (申诉/复核) in the run store: an agent appeals a verdict of their own conversation, or one deduction of it,
with a reason; a reviewer takes it (under review) and accepts or rejects it; a lead may close it with a final
judgement. An accepted appeal changes the official score (rubriceval/audit/official.py reads `appeal_events`).

Who may do what is checked here, on the server side, whatever the client: an agent (role `agent`) acts only on
samples whose metadata names them (`agent_id`, AGENT_FIELD) and only until the verdict's deadline: its sample's audit
task's, else the run's window (DEFAULT_WINDOW_DAYS after the run, or what a lead set; store/appeal_deadlines.py);
reviewers are experts, leads and admins; the final
judgement is a lead's. Every step is one row of the append-only `appeal_events` and one of the audit log, with who
and when. Concurrency is optimistic, as elsewhere in the store: a step names the appeal version its author saw; a
second reviewer deciding the same appeal at once is refused, told who decided it first, and the attempt is logged.
"""
from __future__ import annotations

import builtins
import json
import time
import uuid
from collections.abc import Callable
from typing import Any, NamedTuple

from rubriceval.audit.appeal_deadlines import (
    Deadlines,
    check_days,
    deadlines,
    refusal,
    run_deadline,
    sample_deadline,
    set_task_deadline,
)
from rubriceval.audit.official import OfficialScores, deductions, score_without
from rubriceval.audit.scorecard_official import CardDecisions, appealable_items, with_item_turned
from rubriceval.audit.team import TeamStore
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import ScorecardVerdict
from rubriceval.store.appeal_models import (
    DAY_S,
    REVIEWER_ROLES,
    WHOLE_VERDICT,
    AgentVerdict,
    Appeal,
    AppealError,
    AppealEvent,
    AppealResult,
    AppealState,
    Deadline,
    Outcome,
)
from rubriceval.store.audit_models import clean_expert_name, iso_time
from rubriceval.store.team_models import LEAD_ROLES

AGENT_FIELD = "agent_id"              # the sample metadata naming the agent who handled the conversation

class Target(NamedTuple):
    """What an appeal is against: a rubric verdict (1–5) or a scorecard verdict (its total, 0–base)."""

    kind: str
    score: float | None
    details: dict[str, Any]
    definition: dict[str, Any]

    def check_score(self, score: float) -> None:
        top = int(self.definition.get("base", 100)) if self.kind == "scorecard" else 5
        bottom = 0 if self.kind == "scorecard" else 1
        if not (bottom <= float(score) <= top and float(score) == int(score)):
            raise AppealError(f"score must be a whole number from {bottom} to {top}, got {score!r}", field="score")


def _appeal(row: Any) -> Appeal:
    return Appeal(**{k: row[k] for k in Appeal.model_fields})


class Appeals:
    """Appeals over a TeamStore's connection. `clock` is the time source (tests move it past a deadline)."""

    def __init__(self, team: TeamStore, *, clock: Callable[[], float] = time.time):
        self.team, self.clock = team, clock

    # -- reading ----------------------------------------------------------------------------------------------------
    def get(self, appeal_id: str) -> Appeal:
        rows = self.team.query("SELECT * FROM appeals WHERE appeal_id = :id", {"id": appeal_id})
        if not rows:
            raise AppealError(f"no appeal '{appeal_id}' in this store", field="appeal",
                              hint="`rubriceval appeals list` shows them")
        return _appeal(rows[0])

    def list(self, *, state: AppealState | None = None, run: str | None = None, agent: str | None = None
             ) -> list[Appeal]:
        """Appeals, oldest first; an agent's view passes `agent` (they see their own only)."""
        where, params = ["1 = 1"], {}
        for column, value in (("state", state), ("agent", agent)):
            if value:
                where.append(f"{column} = :{column}")
                params[column] = value
        if run:
            where.append("run_id = :run")
            params["run"] = self.team.audit.resolve(run)
        return [_appeal(r) for r in self.team.query(
            f"SELECT * FROM appeals WHERE {' AND '.join(where)} ORDER BY created_at, appeal_id", params)]

    def events(self, appeal_id: str) -> builtins.list[AppealEvent]:     # `list` here is the method above
        return [AppealEvent(**{k: r[k] for k in AppealEvent.model_fields}) for r in self.team.query(
            "SELECT * FROM appeal_events WHERE appeal_id = :id ORDER BY event_id", {"id": appeal_id})]

    def closes_at(self, run_id: str) -> float:
        """When the run's appeal window closes (the default for samples in no task with a deadline)."""
        return run_deadline(self.team, run_id).closes_at

    def deadline(self, run_id: str, sample_id: str) -> Deadline:
        """When appeals on the verdicts of one sample close: its task's deadline, else the run's."""
        return sample_deadline(self.team, run_id, sample_id)

    def deadlines(self, run_id: str) -> Deadlines:
        return deadlines(self.team, run_id)

    def set_window(self, run: str, *, days: float, by: str) -> float:
        """Appeals on `run` are taken until `days` after the run was made (a lead's setting, logged)."""
        days = check_days(days)
        by = clean_expert_name(by)
        run_id = self.team.audit.resolve(run)
        closes = self.team.audit.runs.run_info(run_id).created_at + days * DAY_S
        with self.team.writing() as conn:
            conn.execute("INSERT INTO appeal_windows (run_id, closes_at, set_by, set_at) VALUES (:r, :c, :b, :a) "
                         "ON CONFLICT (run_id) DO UPDATE SET closes_at = excluded.closes_at, set_by = excluded.set_by, "
                         "set_at = excluded.set_at", {"r": run_id, "c": closes, "b": by, "a": self.clock()})
            self.team.log(by, "appeal_window", run_id, "", "", "saved", {"days": days, "closes_at": closes})
        return closes

    def set_task_window(self, task: str, *, days: float | None, by: str) -> Deadline | None:
        """Appeals on the verdicts of `task`'s samples are taken until `days` after the task was created (None: the
        run's window again). A lead's setting, logged."""
        return set_task_deadline(self.team, task, days=days, by=by, now=self.clock())

    def owner(self, run_id: str, sample_id: str) -> str:
        sql = self.team.conn.sql
        rows = self.team.query(f"SELECT {sql.json_text('sample_json', '$.metadata.' + AGENT_FIELD)} FROM run_samples "
                               "WHERE run_id = :r AND sample_id = :s", {"r": run_id, "s": sample_id})
        if not rows:
            raise AppealError(f"no sample '{sample_id}' in this run", field="sample")
        return str(rows[0][0] or "")

    def agent_verdicts(self, run: str, agent: str) -> builtins.list[AgentVerdict]:
        """The rubric verdicts of the agent's own conversations in a run (nobody else's), with their appeals."""
        run_id = self.team.audit.resolve(run)
        owner = self.team.conn.sql.json_text("s.sample_json", "$.metadata." + AGENT_FIELD)
        rows = self.team.query(
            "SELECT v.sample_id, v.scorer, v.kind, v.score, v.feedback, v.details_json FROM verdicts v "
            f"JOIN run_samples s ON s.run_id = v.run_id AND s.sample_id = v.sample_id WHERE v.run_id = :r AND {owner} = :a "
            f"AND v.kind = 'rubric' ORDER BY {self.team.text_order('v.sample_id')}, "
            f"{self.team.text_order('v.scorer')}", {"r": run_id, "a": agent})
        if self.team.conn.table_exists("scorecard_verdicts"):      # scorecards: the total is the verdict's score
            rows += [{"sample_id": r["sample_id"], "scorer": r["scorecard"], "kind": "scorecard", "score": r["total"],
                      "feedback": "", "details_json": r["verdict_json"]} for r in self.team.query(
                "SELECT v.sample_id, v.scorecard, v.total, v.verdict_json FROM scorecard_verdicts v JOIN run_samples s "
                f"ON s.run_id = v.run_id AND s.sample_id = v.sample_id WHERE v.run_id = :r AND {owner} = :a "
                f"ORDER BY {self.team.text_order('v.sample_id')}, {self.team.text_order('v.scorecard')}",
                {"r": run_id, "a": agent})]
        official = OfficialScores.load(self.team.conn, run_id)
        cards = self._cards(run_id) if any(r["kind"] == "scorecard" for r in rows) else {}
        decisions = CardDecisions.load(self.team.audit.runs, run_id) if cards else None
        closes, now = self.deadlines(run_id), self.clock()
        mine: dict[tuple[str, str], list[Appeal]] = {}
        for appeal in self.list(run=run_id, agent=agent):
            mine.setdefault((appeal.sample_id, appeal.scorer), []).append(appeal)
        out = []
        for r in rows:
            deadline = closes.of(r["sample_id"])
            card = cards.get(r["scorer"]) if r["kind"] == "scorecard" else None
            score: float | None
            if card is not None and decisions is not None:     # the one official rule (audit/scorecard_official.py)
                verdict, human = decisions.official(card, ScorecardVerdict.model_validate_json(r["details_json"]))
                score, items = verdict.totals.total, appealable_items(card, verdict)
                names = {i.id: i.label for i in card.items}
                scorer_name = card.name or card.id
            else:
                score = official.score(r["sample_id"], r["scorer"], r["score"])
                human = official.decision(r["sample_id"], r["scorer"]) is not None
                items, names, scorer_name = deductions(r["kind"], json.loads(r["details_json"] or "{}")), {}, ""
            out.append(AgentVerdict(
                run_id=run_id, sample_id=r["sample_id"], scorer=r["scorer"], kind=r["kind"], scorer_name=scorer_name,
                machine_score=r["score"], official_score=score, human_decided=human, deductions=items,
                item_names=names, feedback=r["feedback"] or "",
                appeal_closes_at=deadline.closes_at, appeal_deadline_task=deadline.task,
                appeal_days_left=deadline.days_left(now), appeals=mine.get((r["sample_id"], r["scorer"]), [])))
        return out

    def _cards(self, run_id: str) -> dict[str, Scorecard]:
        return {str(r[0]): Scorecard.model_validate_json(r[1]) for r in self.team.query(
            "SELECT scorecard, definition_json FROM scorecard_defs WHERE run_id = :r", {"r": run_id})}

    def official_now(self, run_id: str, sample_id: str, scorer: str) -> float | None:
        """The verdict's official score as of now (a scorecard's: the one rule of audit/scorecard_official.py), for
        the pages that show an appeal after a decision."""
        target = self.target(run_id, sample_id, scorer)
        if target.kind != "scorecard":
            return OfficialScores.load(self.team.conn, run_id).score(sample_id, scorer, target.score)
        card = Scorecard.model_validate(target.definition)
        verdict, _ = CardDecisions.load(self.team.audit.runs, run_id, scorer).official(
            card, ScorecardVerdict.model_validate(target.details))
        return verdict.totals.total

    def item_names(self, run_id: str, scorer: str) -> dict[str, str]:
        """A scorecard's item names by id ({} for a rubric): what every list and page shows."""
        card = self._cards(run_id).get(scorer)
        return {i.id: i.label for i in card.items} if card else {}

    # -- steps ------------------------------------------------------------------------------------------------------
    def submit(self, run: str, sample_id: str, scorer: str, *, agent: str, role: str, reason: str,
               item: str = WHOLE_VERDICT) -> Appeal:
        """An agent's appeal against a verdict of their own conversation (item '') or one of its deductions."""
        agent = clean_expert_name(agent)
        if role != "agent":
            raise AppealError("only an agent appeals a verdict of their own conversation", field="role")
        reason = (reason or "").strip()
        if not reason:
            raise AppealError("say why the verdict is wrong (the reviewer reads it)", field="reason")
        run_id = self.team.audit.resolve(run)
        if self.owner(run_id, sample_id) != agent:
            # The same words whether the sample is someone else's or has no agent: nothing about others leaks.
            raise AppealError(f"sample '{sample_id}' is not one of your conversations", field="sample")
        now = self.clock()
        deadline = self.deadline(run_id, sample_id)
        if now > deadline.closes_at:
            raise AppealError(refusal(deadline), field="deadline")
        target = self.target(run_id, sample_id, scorer)
        proposed: float | None = None
        official: float | None
        machine = target.score
        if target.kind == "scorecard":      # the official verdict as the agent sees it, and the total if they win
            card = Scorecard.model_validate(target.definition)
            now_verdict, _ = CardDecisions.load(self.team.audit.runs, run_id, scorer).official(
                card, ScorecardVerdict.model_validate(target.details))
            official = now_verdict.totals.total
            if item != WHOLE_VERDICT:
                found = appealable_items(card, now_verdict)
                if item not in found:
                    raise AppealError(f"'{item}' is not an item of this scorecard verdict you may appeal",
                                      field="item", hint="items: " + (", ".join(found) or "none"))
                proposed = with_item_turned(card, now_verdict, item).totals.total
        else:
            if item != WHOLE_VERDICT:
                found = deductions(target.kind, target.details)
                if item not in found:
                    raise AppealError(f"'{item}' is not a deduction of this verdict", field="item",
                                      hint="deductions: " + (", ".join(found) or "none"))
                proposed = score_without(target.kind, target.definition, target.details, [item])
            official = OfficialScores.load(self.team.conn, run_id).score(sample_id, scorer, machine)
        appeal = Appeal(appeal_id=uuid.uuid4().hex[:12], run_id=run_id, sample_id=sample_id, scorer=scorer, item=item,
                        agent=agent, reason=reason, state="submitted", machine_score=machine,
                        official_before=official, proposed_score=proposed, created_at=now, updated_at=now, version=1)
        with self.team.writing() as conn:
            if conn.execute("SELECT 1 FROM appeals WHERE run_id = :r AND sample_id = :s AND scorer = :c AND item = :i",
                            {"r": run_id, "s": sample_id, "c": scorer, "i": item}).fetchone():
                raise AppealError("you already appealed this " + ("deduction" if item else "verdict"), field="item")
            data = appeal.model_dump()
            conn.execute(f"INSERT INTO appeals ({', '.join(data)}) VALUES ({', '.join(':' + k for k in data)})", data)
            self._event(appeal, agent, role, "submit", "", "submitted", None, None, reason, now)
        return appeal

    def target(self, run_id: str, sample_id: str, scorer: str) -> Target:
        """The rubric verdict `scorer` of the sample, else its scorecard verdict of that id."""
        rows = self.team.query("SELECT kind, score, details_json FROM verdicts WHERE run_id = :r AND sample_id = :s "
                               "AND scorer = :c", {"r": run_id, "s": sample_id, "c": scorer})
        if rows and rows[0]["kind"] == "rubric":
            return Target("rubric", rows[0]["score"], json.loads(rows[0]["details_json"] or "{}"),
                          self.team.definition(run_id, scorer))
        if self.team.conn.table_exists("scorecard_verdicts"):
            card = self.team.query("SELECT v.total, v.verdict_json, d.definition_json FROM scorecard_verdicts v JOIN "
                                   "scorecard_defs d ON d.run_id = v.run_id AND d.scorecard = v.scorecard WHERE "
                                   "v.run_id = :r AND v.sample_id = :s AND v.scorecard = :c",
                                   {"r": run_id, "s": sample_id, "c": scorer})
            if card:
                return Target("scorecard", card[0]["total"], json.loads(card[0]["verdict_json"]),
                              json.loads(card[0]["definition_json"]))
        raise AppealError(f"sample '{sample_id}' has no rubric or scorecard verdict '{scorer}'", field="scorer")

    def review(self, appeal_id: str, *, reviewer: str, role: str, expected_version: int) -> AppealResult:
        """A reviewer takes a submitted appeal (复核): it is under review, theirs."""
        return self._step(appeal_id, reviewer, role, "review", expected_version, allowed=("submitted",),
                          roles=REVIEWER_ROLES, to_state="under_review")

    def decide(self, appeal_id: str, *, reviewer: str, role: str, outcome: Outcome, reason: str,
               expected_version: int, score: float | None = None) -> AppealResult:
        """Accept (the official score becomes `score`, or the score without the appealed deduction) or reject."""
        return self._step(appeal_id, reviewer, role, "decide", expected_version, allowed=("submitted", "under_review"),
                          roles=REVIEWER_ROLES, to_state=outcome, outcome=outcome, reason=reason, score=score)

    def finalize(self, appeal_id: str, *, lead: str, role: str, outcome: Outcome, reason: str,
                 expected_version: int, score: float | None = None) -> AppealResult:
        """A lead's final judgement on a decided appeal: uphold or overturn the reviewer; closes the appeal."""
        return self._step(appeal_id, lead, role, "final", expected_version, allowed=("accepted", "rejected"),
                          roles=LEAD_ROLES, to_state="final", outcome=outcome, reason=reason, score=score)

    def _step(self, appeal_id: str, actor: str, role: str, action: str, expected_version: int, *,
              allowed: tuple[str, ...], roles: frozenset[str], to_state: str, outcome: Outcome | None = None,
              reason: str = "", score: float | None = None) -> AppealResult:
        actor = clean_expert_name(actor)
        if role not in roles:
            raise AppealError(f"a {role} cannot {'close' if action == 'final' else 'review'} appeals", field="role")
        reason = (reason or "").strip()
        if outcome is not None and not reason:
            raise AppealError("a reason is required (the agent reads it)", field="reason")
        with self.team.writing() as conn:
            current = self.get(appeal_id)
            if score is not None:
                target = self.target(current.run_id, current.sample_id, current.scorer)
                target.check_score(score)
                if target.kind == "scorecard" and current.item and score != current.proposed_score:
                    # 改判 on a card item is the item's outcome; the total follows by the card's arithmetic
                    raise AppealError("an appeal on one scorecard item changes that item: the total is recomputed "
                                      "by the card, not given", field="score", hint="accept or reject, no score")
            payload = {"appeal_id": appeal_id, "outcome": outcome, "score": score, "reason": reason,
                       "expected_version": expected_version}
            if current.version != int(expected_version) or current.state not in allowed:
                last = conn.execute("SELECT actor, at, to_state FROM appeal_events WHERE appeal_id = :id "
                                    "ORDER BY event_id DESC LIMIT 1", {"id": appeal_id}).fetchone()
                self.team.log(actor, f"appeal_{action}", current.run_id, current.sample_id, current.scorer,
                              "conflict", {**payload, "current_version": current.version, "state": current.state})
                who = f" by {last['actor']} at {iso_time(last['at'])}" if last else ""
                return AppealResult(ok=False, appeal=current,
                                    message=f"this appeal changed since you opened it ({current.state}{who}); "
                                            "reload it")
            if outcome == "accepted" and score is None:
                score = current.decided_score if action == "final" and current.decision == "accepted" else None
                score = score if score is not None else current.proposed_score
                if score is None:
                    raise AppealError("give the score the verdict should have", field="score",
                                      hint="an appeal against a whole verdict, or a judge item, needs the reviewer's "
                                           "score")
            now = self.clock()
            changes: dict[str, Any] = {"state": to_state, "updated_at": now, "version": current.version + 1}
            if action in ("review", "decide"):
                changes["reviewer"] = actor
            if action == "decide":
                changes.update(decision=outcome, decided_score=score if outcome == "accepted" else None,
                               decision_reason=reason)
            if action == "final":
                changes.update(final_by=actor, final_outcome=outcome)
            conn.execute(f"UPDATE appeals SET {', '.join(f'{k} = :{k}' for k in changes)} WHERE appeal_id = :id",
                         {**changes, "id": appeal_id})
            updated = current.model_copy(update=changes)
            self._event(updated, actor, role, action, current.state, to_state, outcome,
                        score if outcome == "accepted" else None, reason, now)
        return AppealResult(ok=True, appeal=updated)

    def _event(self, appeal: Appeal, actor: str, role: str, action: str, from_state: str, to_state: str,
               outcome: str | None, score: float | None, reason: str, now: float) -> None:
        """One step into appeal_events and the audit log (inside the caller's transaction)."""
        self.team.conn.execute(
            "INSERT INTO appeal_events (appeal_id, run_id, sample_id, scorer, item, actor, role, action, from_state, "
            "to_state, outcome, score, reason, at) VALUES (:id, :run, :sample, :scorer, :item, :actor, :role, "
            ":action, :from_state, :to_state, :outcome, :score, :reason, :at)",
            {"id": appeal.appeal_id, "run": appeal.run_id, "sample": appeal.sample_id, "scorer": appeal.scorer,
             "item": appeal.item, "actor": actor, "role": role, "action": action, "from_state": from_state,
             "to_state": to_state, "outcome": outcome, "score": score, "reason": reason, "at": now})
        self.team.log(actor, f"appeal_{action}", appeal.run_id, appeal.sample_id, appeal.scorer, "saved",
                      {"appeal_id": appeal.appeal_id, "item": appeal.item, "from": from_state, "to": to_state,
                       "outcome": outcome, "score": score, "reason": reason})
