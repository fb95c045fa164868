"""Team audits in the run store: tasks sampled from a run, each expert's share of it, and their reviews.

A task is fixed when it is created (its items, and who reviews each), so every expert's queue is a plain indexed
query however large the run. An expert's score is written where every other expert response is
(`audit_responses`, which agreement and calibration read) and, append-only, in `team_reviews` with whether the
judge's verdict was hidden when it was saved (blind review). Concurrency is optimistic per assignment: a save names
the version the expert opened; another save in between (the same expert in a second tab, say) makes it a conflict,
logged with what was typed. Two experts on one item never conflict: each writes their own opinion.

Adjudication, metric-verdict corrections and sessions live in team_adjudication.py, team_metrics.py and
team_sessions.py over the same connection. One SQL text for SQLite and PostgreSQL (store/db.py: named parameters,
ON CONFLICT upserts, no JSON functions, text sorted byte-wise); writes go through `writing()`, the store's write
transaction on either engine.
"""
from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rubriceval.audit.sampling import assign, choose, stratum
from rubriceval.audit.team_cards import card_candidates, card_plan_items, run_cards
from rubriceval.scoring.consensus import stored_consensus
from rubriceval.store.audit import AuditStore, check_score, response_action, upsert_response
from rubriceval.store.audit_models import clean_expert_name
from rubriceval.store.db import Database
from rubriceval.store.team_models import (
    Assignment,
    Candidate,
    ExpertProgress,
    QueueFilter,
    QueuePage,
    QueueRow,
    TaskInfo,
    TaskSpec,
    TeamError,
    TeamSaveResult,
    tag_field,
    tags_of,
)


def tag_needle(tag: str) -> str:
    """What a tag_field column ('|a|b|') contains when it holds `tag` (found with instr: exact and case-sensitive
    on both engines, where LIKE ignores ASCII case on SQLite only)."""
    return f"|{tag}|"


class TeamStore:
    """Team tables on the AuditStore's connection (autocommit; writes take the store's write transaction).

    `path`: a SQLite file or a postgresql:// URL, as AuditStore takes it."""

    def __init__(self, path: str | Path | None = None, *, audit: AuditStore | None = None):
        if audit is None and path is None:
            raise TeamError("a TeamStore needs a store path (or URL) or an AuditStore")
        self._owns_audit = audit is None
        if audit is None:
            assert path is not None         # refused just above otherwise
            audit = AuditStore(path)
        self.audit = audit
        self.path = self.audit.path
        self.conn = self.audit.conn
        self._lock = self.audit._lock

    def close(self) -> None:
        if self._owns_audit:
            self.audit.close()

    def __enter__(self) -> TeamStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------------------------------
    def query(self, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        with self._lock:
            return self.conn.execute(sql, params or {}).fetchall()

    def text_order(self, column: str) -> str:
        """`column` as an ORDER BY key sorting text the same way on both engines."""
        return self.conn.sql.byte_order(column)

    @contextmanager
    def writing(self) -> Iterator[Database]:
        """One write transaction: committed when the block ends, rolled back on an exception."""
        with self._lock, self.conn:
            yield self.conn

    def log(self, actor: str, action: str, run_id: str, sample_id: str, scorer: str, outcome: str,
            payload: dict[str, Any]) -> None:
        """Into the one append-only audit log (inside the caller's transaction)."""
        self.audit.log_action(actor, action, run_id, sample_id, scorer, outcome, payload)

    def definition(self, run_id: str, scorer: str) -> dict[str, Any]:
        rows = self.query("SELECT definition_json FROM run_scorers WHERE run_id = :run AND scorer = :scorer",
                          {"run": run_id, "scorer": scorer})
        return json.loads(rows[0][0]) if rows else {}

    # -- tasks ------------------------------------------------------------------------------------------------------
    def candidates(self, run_id: str, scorer: str, *, with_spread: bool) -> list[Candidate]:
        """The run's verdicts of one rubric, with their sample's tags and intent (JSON read here, not in SQL)."""
        samples = {r["sample_id"]: json.loads(r["sample_json"]) for r in self.query(
            "SELECT s.sample_id, s.sample_json FROM run_samples s WHERE s.run_id = :run AND EXISTS (SELECT 1 FROM "
            "verdicts v WHERE v.run_id = s.run_id AND v.sample_id = s.sample_id AND v.scorer = :scorer)",
            {"run": run_id, "scorer": scorer})}
        out = []
        for r in self.query("SELECT sample_id, score, details_json FROM verdicts WHERE run_id = :run "
                            "AND scorer = :scorer AND kind = 'rubric'", {"run": run_id, "scorer": scorer}):
            sample = samples.get(r["sample_id"], {})
            spread, disputed = None, False
            if with_spread:
                several = stored_consensus(json.loads(r["details_json"] or "{}"))
                spread, disputed = (several.spread, several.disagreement) if several else (None, False)
            out.append(Candidate(sample_id=r["sample_id"], scorer=scorer, judge_score=r["score"],
                                 tags=[str(t).replace("|", "/") for t in sample.get("tags") or []],
                                 intent=str(sample.get("intent") or ""), spread=spread, disputed=disputed))
        return out

    def create_task(self, spec: TaskSpec, created_by: str) -> TaskInfo:
        """Sample `spec.n` verdicts of each rubric and give each item to `spec.overlap` experts."""
        created_by = clean_expert_name(created_by)
        experts = [clean_expert_name(e) for e in spec.experts]
        run_id = self.audit.resolve(spec.run)
        known = {s["scorer"]: s["definition"] for s in self.audit.rubric_scorers(run_id)}
        unknown = [r for r in spec.rubrics if r not in known]
        cards = run_cards(self, run_id)
        if unknown:
            hint = "rubrics of this run: " + (", ".join(sorted(known)) or "none")
            if any(u in cards or u.removeprefix("scorecard:") in cards for u in unknown):
                hint = "a scorecard is sampled with --scorecards " + ",".join(u.removeprefix("scorecard:")
                                                                               for u in unknown)
            raise TeamError(f"run has no rubric {', '.join(unknown)}", field="rubrics", hint=hint)
        missing = [c for c in spec.scorecards if c not in cards]
        if missing:
            raise TeamError(f"run has no scorecard {', '.join(missing)}", field="scorecards",
                            hint="scorecards of this run: " + (", ".join(sorted(cards)) or "none"))
        for card_id in spec.scorecards:      # a card's pass mark stands where a rubric's threshold does
            known[card_id] = {"threshold": cards[card_id].pass_total or 0}
        picked: list[list[Candidate]] = []
        planned = None                   # a sampling plan's items (audit/team_plan.py): strata, weights, risks
        if spec.plan is not None:
            from rubriceval.audit.plan import SamplingPlan
            from rubriceval.audit.team_plan import plan_items

            plan = SamplingPlan.model_validate(spec.plan)
            planned = [i for rubric in spec.rubrics for i in plan_items(self, run_id, rubric, plan, spec.seed)]
            planned += [i for card in spec.scorecards for i in card_plan_items(self, run_id, card, plan, spec.seed)]
            picked = [[i.candidate for i in planned]]
        for rubric in spec.rubrics if planned is None else ():
            pool = self.candidates(run_id, rubric, with_spread=spec.sampling == "least_sure")
            picked.append(choose(pool, spec.n or 0, spec.sampling, seed=spec.seed))
        for card in spec.scorecards if planned is None else ():
            picked.append(choose(card_candidates(self, run_id, card), spec.n or 0, spec.sampling, seed=spec.seed))
        items = _interleave(picked)
        if not items:
            raise TeamError("these rubrics or scorecards have no verdicts in this run", field="rubrics")
        experts_of = assign(len(items), experts, spec.overlap)
        task_id = uuid.uuid4().hex[:12]
        name = spec.name.strip() or f"{self.audit.runs.run_info(run_id).name}-task-{task_id[:4]}"
        if self.query("SELECT 1 FROM team_tasks WHERE name = :name", {"name": name}):
            raise TeamError(f"a task named '{name}' already exists", field="name")
        now = time.time()
        stored_spec = spec.model_copy(update={"run": run_id, "experts": experts, "name": name})
        with self.writing() as conn:
            conn.execute("INSERT INTO team_tasks (task_id, name, run_id, created_by, created_at, sampling, overlap, "
                         "blind, seed, spec_json, appeal_days) VALUES (:task, :name, :run, :by, :at, :sampling, "
                         ":overlap, :blind, :seed, :spec, :appeal_days)",
                         {"task": task_id, "name": name, "run": run_id, "by": created_by, "at": now,
                          "sampling": spec.sampling, "overlap": spec.overlap, "blind": int(spec.blind),
                          "seed": spec.seed, "spec": stored_spec.model_dump_json(), "appeal_days": spec.appeal_days})
            conn.executemany(
                "INSERT INTO team_task_items (task_id, item_no, sample_id, scorer, judge_score, threshold, stratum, "
                "tags, intent) VALUES (:task, :no, :sample, :scorer, :judge, :threshold, :stratum, :tags, :intent)",
                [{"task": task_id, "no": no, "sample": c.sample_id, "scorer": c.scorer, "judge": c.judge_score,
                  "threshold": float(known[c.scorer].get("threshold", 4)),
                  "stratum": stratum(c) if planned is None else planned[no - 1].stratum,
                  "tags": tag_field(c.tags), "intent": c.intent} for no, c in enumerate(items, start=1)])
            if planned is not None:
                from rubriceval.audit.team_plan import save_plan_rows

                save_plan_rows(conn, task_id, planned)
            conn.executemany(
                "INSERT INTO team_assignments (task_id, item_no, expert, state) VALUES (:task, :no, :expert, 'open')",
                [{"task": task_id, "no": no, "expert": e}
                 for no, names in enumerate(experts_of, start=1) for e in names])
            self.log(created_by, "team_create_task", run_id, "", "", "saved",
                     {"task_id": task_id, **stored_spec.model_dump(), "n_items": len(items)})
        # Without statistics PostgreSQL joins a large task's items and assignments by nested loop (2,000 items:
        # 0.5 s a count, 100,000: minutes).
        self.conn.refresh_statistics("team_task_items", "team_assignments")
        return self.task(task_id)

    def task(self, task: str) -> TaskInfo:
        """A task by id or name."""
        rows = self.query("SELECT * FROM team_tasks WHERE task_id = :t OR name = :t", {"t": task})
        if not rows:
            raise TeamError(f"no audit task '{task}' in this store", file=self.audit.location,
                            hint="`rubriceval audit-task list` shows the tasks")
        r = rows[0]
        spec = TaskSpec.model_validate_json(r["spec_json"])
        n_items = self.query("SELECT COUNT(*) FROM team_task_items WHERE task_id = :t", {"t": r["task_id"]})[0][0]
        return TaskInfo(task_id=r["task_id"], name=r["name"], run_id=r["run_id"], created_by=r["created_by"],
                        created_at=r["created_at"], sampling=r["sampling"], overlap=r["overlap"],
                        blind=bool(r["blind"]), seed=r["seed"], rubrics=spec.rubrics, experts=spec.experts,
                        n_items=n_items, scorecards=spec.scorecards,
                        appeal_days=r["appeal_days"])    # the column: a lead may change it later

    def tasks(self, *, expert: str | None = None) -> list[TaskInfo]:
        """Every task, oldest first; with `expert`, only the tasks that give them items."""
        if expert is None:
            rows = self.query("SELECT task_id FROM team_tasks ORDER BY created_at")
        else:
            rows = self.query("SELECT t.task_id FROM team_tasks t WHERE EXISTS (SELECT 1 FROM team_assignments a "
                              "WHERE a.task_id = t.task_id AND a.expert = :e) ORDER BY t.created_at", {"e": expert})
        return [self.task(r[0]) for r in rows]

    # -- an expert's share ------------------------------------------------------------------------------------------
    def queue(self, task: str, expert: str, flt: QueueFilter | None = None, *, page: int = 0, page_size: int = 50,
              as_lead: bool = False) -> QueuePage:
        """One page of an expert's share, in item order. A judge-score filter on a blind task is a lead's tool: an
        expert filtering by it would learn the judge's score before saving their own."""
        info = self.task(task)
        flt = flt or QueueFilter()
        if info.blind and not as_lead and (flt.score_min is not None or flt.score_max is not None):
            raise TeamError("this task is blind: the judge's score is hidden until you save yours",
                            field="score_min")
        where, params = _queue_where(info.task_id, expert, flt)
        total = self.query(f"SELECT COUNT(*) FROM team_assignments a JOIN team_task_items ti ON "
                           f"ti.task_id = a.task_id AND ti.item_no = a.item_no WHERE {where}", params)[0][0]
        rows = self.query(
            "SELECT a.item_no, ti.sample_id, ti.scorer, a.state, a.score, ti.judge_score FROM team_assignments a "
            "JOIN team_task_items ti ON ti.task_id = a.task_id AND ti.item_no = a.item_no "
            f"WHERE {where} ORDER BY a.item_no LIMIT :limit OFFSET :offset",
            {**params, "limit": page_size, "offset": page * page_size})
        out = []
        for r in rows:
            shown = as_lead or judge_shown(info.blind, r["state"])
            out.append(QueueRow(item_no=r["item_no"], sample_id=r["sample_id"], scorer=r["scorer"], state=r["state"],
                                score=r["score"], judge_score=r["judge_score"] if shown else None,
                                judge_shown=shown))
        return QueuePage(rows=out, total=total, page=page, page_size=page_size)

    def progress(self, task: str, expert: str | None = None) -> list[ExpertProgress]:
        """Each expert's share: assigned, scored, unsure (only `expert`'s when given)."""
        info = self.task(task)
        who, params = ("AND expert = :e", {"t": info.task_id, "e": expert}) if expert else ("", {"t": info.task_id})
        rows = self.query(
            "SELECT expert, COUNT(*) AS n, SUM(CASE WHEN state = 'scored' THEN 1 ELSE 0 END) AS scored, "
            "SUM(CASE WHEN state = 'unsure' THEN 1 ELSE 0 END) AS unsure FROM team_assignments "
            f"WHERE task_id = :t {who} GROUP BY expert ORDER BY {self.text_order('expert')}", params)
        return [ExpertProgress(expert=r["expert"], assigned=r["n"], scored=r["scored"] or 0, unsure=r["unsure"] or 0)
                for r in rows]

    def assignment(self, task: str, item_no: int, expert: str) -> Assignment:
        """One item of `expert`'s share; an item that is not theirs is refused (no one reads another's queue)."""
        info = self.task(task)
        rows = self.query(
            "SELECT a.state, a.score, a.note, a.version, ti.sample_id, ti.scorer FROM team_assignments a "
            "JOIN team_task_items ti ON ti.task_id = a.task_id AND ti.item_no = a.item_no "
            "WHERE a.task_id = :t AND a.item_no = :no AND a.expert = :e",
            {"t": info.task_id, "no": int(item_no), "e": expert})
        if not rows:
            raise TeamError(f"item {item_no} of task '{info.name}' is not assigned to {expert}", field="item")
        r = rows[0]
        ticked = [t[0] for t in self.query(
            "SELECT failure_tag FROM team_item_tags WHERE task_id = :t AND item_no = :no AND expert = :e "
            f"ORDER BY {self.text_order('failure_tag')}", {"t": info.task_id, "no": int(item_no), "e": expert})]
        declared = [str(t) for t in self.definition(info.run_id, r["scorer"]).get("failure_tags") or []]
        return Assignment(task_id=info.task_id, item_no=int(item_no), run_id=info.run_id, sample_id=r["sample_id"],
                          scorer=r["scorer"], expert=expert, state=r["state"], score=r["score"], note=r["note"],
                          tags=ticked, version=r["version"], judge_shown=judge_shown(info.blind, r["state"]),
                          failure_tags=declared, blind_task=info.blind)

    # -- saving -----------------------------------------------------------------------------------------------------
    def save_review(self, task: str, item_no: int, expert: str, *, score: int, note: str = "",
                    tags: list[str] | None = None, expected_version: int) -> TeamSaveResult:
        """The expert's score (with the failure tags they ticked and an optional note)."""
        score = check_score(score)
        current = self.assignment(task, item_no, expert)
        tags = sorted(set(tags or []))
        undeclared = [t for t in tags if t not in current.failure_tags]
        if undeclared:
            raise TeamError(f"rubric '{current.scorer}' declares no failure tag {', '.join(undeclared)}",
                            field="tags", hint="declared: " + (", ".join(current.failure_tags) or "none"))
        verdict = self.query("SELECT score, scorer_version FROM verdicts WHERE run_id = :r AND sample_id = :s "
                             "AND scorer = :c", {"r": current.run_id, "s": current.sample_id, "c": current.scorer})[0]
        note = (note or "").strip()

        def write(conn: Database, now: float, blind: bool) -> None:
            upsert_response(conn, current.run_id, current.sample_id, current.scorer, expert=expert, score=score,
                            action=response_action(verdict["score"], score), reason=note,
                            judge_score=verdict["score"], scorer_version=verdict["scorer_version"], now=now)
            conn.execute("DELETE FROM team_item_tags WHERE task_id = :t AND item_no = :no AND expert = :e",
                         {"t": current.task_id, "no": current.item_no, "e": expert})
            conn.executemany("INSERT INTO team_item_tags (task_id, item_no, expert, failure_tag) "
                             "VALUES (:t, :no, :e, :tag)", [{"t": current.task_id, "no": current.item_no,
                                                            "e": expert, "tag": tag} for tag in tags])

        return self._save(current, "score", score=score, note=note, tags=tags, expected_version=expected_version,
                          write=write)

    def mark_unsure(self, task: str, item_no: int, expert: str, *, note: str, expected_version: int
                    ) -> TeamSaveResult:
        """'I can't tell' with why, instead of a guess: the item goes to the lead; no score is recorded."""
        note = (note or "").strip()
        if not note:
            raise TeamError("say what makes you unsure (the lead reads it)", field="note")
        current = self.assignment(task, item_no, expert)
        if current.state == "scored":
            raise TeamError("you already saved a score for this item; change the score instead", field="state")
        return self._save(current, "unsure", score=None, note=note, tags=[], expected_version=expected_version,
                          write=lambda conn, now, blind: None)

    def _save(self, current: Assignment, kind: str, *, score: int | None, note: str, tags: list[str],
              expected_version: int, write) -> TeamSaveResult:
        action = "team_review" if kind == "score" else "team_unsure"
        payload = {"task_id": current.task_id, "item_no": current.item_no, "kind": kind, "score": score,
                   "note": note, "tags": tags, "expected_version": expected_version}
        with self.writing() as conn:
            row = conn.execute("SELECT state, version FROM team_assignments WHERE task_id = :t AND item_no = :no AND "
                               "expert = :e", {"t": current.task_id, "no": current.item_no,
                                               "e": current.expert}).fetchone()
            if row["version"] != int(expected_version):
                self.log(current.expert, action, current.run_id, current.sample_id, current.scorer, "conflict",
                         {**payload, "current_version": row["version"]})
                return TeamSaveResult(ok=False, version=row["version"],
                                      message="this item changed since you opened it (another window?); reload it")
            now = time.time()
            # Blind only while the judge is still hidden: a second save, after the reveal, is an open review.
            blind = current.blind_task and row["state"] != "scored"
            write(conn, now, blind)
            conn.execute(
                "INSERT INTO team_reviews (task_id, item_no, run_id, sample_id, scorer, expert, kind, score, note, "
                "tags, blind, saved_at) VALUES (:t, :no, :run, :sample, :scorer, :e, :kind, :score, :note, :tags, "
                ":blind, :at)", {"t": current.task_id, "no": current.item_no, "run": current.run_id,
                                 "sample": current.sample_id, "scorer": current.scorer, "e": current.expert,
                                 "kind": kind, "score": score, "note": note, "tags": tag_field(tags),
                                 "blind": int(blind), "at": now})
            conn.execute("UPDATE team_assignments SET state = :state, score = :score, note = :note, "
                         "version = version + 1, updated_at = :at WHERE task_id = :t AND item_no = :no AND "
                         "expert = :e", {"state": "scored" if kind == "score" else "unsure", "score": score,
                                         "note": note, "at": now, "t": current.task_id, "no": current.item_no,
                                         "e": current.expert})
            self.audit.bump_version(current.run_id, current.sample_id, current.scorer, current.expert)
            self.log(current.expert, action, current.run_id, current.sample_id, current.scorer, "saved",
                     {**payload, "blind": blind})
        return TeamSaveResult(ok=True, version=row["version"] + 1)

    def review_history(self, task: str, item_no: int) -> list[dict[str, Any]]:
        """Every review of an item, oldest first (the append-only record)."""
        info = self.task(task)
        return [dict(r) | {"tags": tags_of(r["tags"]), "blind": bool(r["blind"])} for r in self.query(
            "SELECT expert, kind, score, note, tags, blind, saved_at FROM team_reviews WHERE task_id = :t AND "
            "item_no = :no ORDER BY review_id", {"t": info.task_id, "no": int(item_no)})]


def judge_shown(blind_task: bool, state: str) -> bool:
    """The one rule of blind review: the judge's verdict reaches an expert only after they saved a score."""
    return not blind_task or state == "scored"


def _interleave(picked: list[list[Candidate]]) -> list[Candidate]:
    """Rubrics taken in turns, so an expert's queue mixes them in each rubric's sampled order."""
    out: list[Candidate] = []
    for rank in range(max((len(p) for p in picked), default=0)):
        out += [p[rank] for p in picked if rank < len(p)]
    return out


def _queue_where(task_id: str, expert: str, flt: QueueFilter) -> tuple[str, dict[str, Any]]:
    where = ["a.task_id = :task", "a.expert = :expert"]
    params: dict[str, Any] = {"task": task_id, "expert": expert}
    for column, value, key in (("ti.scorer", flt.scorer, "scorer"), ("a.state", flt.state, "state"),
                               ("ti.intent", flt.intent, "intent")):
        if value:
            where.append(f"{column} = :{key}")
            params[key] = value
    if flt.tag:
        where.append("instr(ti.tags, :tag) > 0")
        params["tag"] = tag_needle(flt.tag)
    if flt.after is not None:
        where.append("a.item_no > :after")
        params["after"] = flt.after
    if flt.score_min is not None:
        where.append("ti.judge_score >= :smin")
        params["smin"] = flt.score_min
    if flt.score_max is not None:
        where.append("ti.judge_score <= :smax")
        params["smax"] = flt.score_max
    return " AND ".join(where), params
