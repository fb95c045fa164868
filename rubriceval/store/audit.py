"""Expert audits, kept in the run store (a SQLite file or a PostgreSQL database, through store/db.py): responses
to judge verdicts, ground-truth edits, and an append-only log of every save attempt.

Why the run store: an audit is only meaningful next to the verdicts it judges, and copying the store copies both.

Concurrency is optimistic. Every audit item (run, sample, scorer) and every sample (run, sample; scorer '') carries
a version number. A writer sends the versions it saw when it opened the item; if another expert saved in between,
the write is refused as a conflict (and logged with its full payload, so nothing typed is lost) and the expert
reloads. Saving a response checks both versions, because a ground-truth edit changes what the expert was judging.
A save is one write transaction (`with db:`: SQLite's BEGIN IMMEDIATE, PostgreSQL's store-wide advisory lock), so
the version check and the write see the same state on both engines.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.store.audit_models import (
    GROUND_TRUTH_FIELD,
    SAMPLE_LEVEL,
    AuditError,
    AuditItem,
    AuditLogEntry,
    AuditResponse,
    Conflict,
    GroundTruthEdit,
    ItemVersions,
    Progress,
    QueueFilter,
    QueueRow,
    ResponseAction,
    SaveResult,
    clean_expert_name,
    context_field,
    iso_time,
)
from rubriceval.store.audit_queue import QueueRows, human_text, queue_query, queue_row
from rubriceval.store.corrections import apply_corrections, context_marks, with_provenance
from rubriceval.store.db import Database
from rubriceval.store.location import display_location, is_server_url, store_target
from rubriceval.store.runs import RunStore, row_to_verdict
from rubriceval.store.turn_audit import ExpertTurnVerdict, save_turn_verdict, turn_verdicts


def _now() -> float:
    return time.time()


def check_score(score: object) -> int:
    """An expert's score: a whole number 1–5 (4 or 4.0), never rounded or clamped."""
    if isinstance(score, bool) or not isinstance(score, (int, float)) or score != int(score) \
            or not 1 <= score <= 5:
        raise AuditError(f"score must be a whole number from 1 to 5, got {score!r}", field="score")
    return int(score)


def response_action(judge_score: float | None, score: int) -> ResponseAction:
    return "score_unscored" if judge_score is None else "agree" if score == judge_score else "override"


def upsert_response(conn: Database, run_id: str, sample_id: str, scorer: str, *, expert: str, score: int,
                    action: ResponseAction, reason: str, judge_score: float | None, scorer_version: str,
                    now: float) -> None:
    """An expert's current response to a verdict (one row per expert; the audit log keeps every save)."""
    conn.execute(
        "INSERT INTO audit_responses VALUES (?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT (run_id, sample_id, scorer, expert) DO UPDATE SET score=excluded.score, "
        "action=excluded.action, reason=excluded.reason, judge_score=excluded.judge_score, "
        "scorer_version=excluded.scorer_version, updated_at=excluded.updated_at",
        (run_id, sample_id, scorer, expert, score, action, reason, judge_score, scorer_version, now, now))


class AuditStore:
    """Audit tables on their own connection to the run store (autocommit; writes inside `with self.conn:`).

    `target`: a SQLite file path or a postgresql:// URL (`self.path` keeps it: a Path, or the URL as given)."""

    def __init__(self, target: str | Path, *, must_exist: bool = True):
        self.path = store_target(target)
        self.location = display_location(self.path)       # for messages: never a password
        on_server = is_server_url(self.path)
        if must_exist and not on_server and not Path(self.path).is_file():
            raise self._no_store()
        self._lock = threading.RLock()
        self.conn = Database(self.path)
        if must_exist and on_server and not self.conn.table_exists("runs"):   # a database nothing was run into
            self.conn.close()
            raise self._no_store()
        self.runs = RunStore(self.path)            # opening it brings the store to the schema (store/migrations.py)

    def _no_store(self) -> AuditError:
        return AuditError("no run store here", file=self.location, hint="run `rubriceval run` first, or pass --store")

    def close(self) -> None:
        with self._lock:
            self.conn.close()
        self.runs.close()

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------------------------------
    def query(self, sql: str, params: Any = ()) -> list[Any]:
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def resolve(self, run: str) -> str:
        return self.runs.resolve(run)

    def rubric_scorers(self, run: str) -> list[dict[str, Any]]:
        return [s for s in self.runs.scorers(run) if s["kind"] == "rubric"]

    def facets(self, run: str) -> dict[str, list[str]]:
        """Filter choices: rubric scorers with verdicts, tags and intents present in the run."""
        run_id = self.resolve(run)
        sql = self.conn.sql
        # Sorted here, not in SQL: Python compares code points, as SQLite does bytes; a server's collation may not.
        scorers = sorted(r[0] for r in self.query(
            "SELECT DISTINCT scorer FROM verdicts WHERE run_id=? AND kind='rubric'", (run_id,)))
        tags = sorted(r[0] for r in self.query(
            f"SELECT DISTINCT t.value FROM run_samples s, {sql.json_items('s.sample_json', 't', '$.tags')} "
            "WHERE s.run_id=?", (run_id,)))
        intent = sql.json_text("sample_json", "$.intent")
        intents = sorted(r[0] for r in self.query(
            f"SELECT DISTINCT {intent} FROM run_samples WHERE run_id=? AND COALESCE({intent}, '') != ''", (run_id,)))
        return {"scorers": scorers, "tags": tags, "intents": intents}

    def progress(self, run: str, expert: str = "", scorer: str | None = None) -> Progress:
        run_id = self.resolve(run)
        scorer_sql, params = ("AND v.scorer = ?", [scorer]) if scorer else ("", [])
        row = self.query(
            "SELECT COUNT(*) AS total, "
            "SUM(CASE WHEN EXISTS (SELECT 1 FROM audit_responses r WHERE r.run_id=v.run_id "
            "    AND r.sample_id=v.sample_id AND r.scorer=v.scorer) THEN 1 ELSE 0 END) AS audited, "
            "SUM(CASE WHEN EXISTS (SELECT 1 FROM audit_responses r WHERE r.run_id=v.run_id "
            "    AND r.sample_id=v.sample_id AND r.scorer=v.scorer AND r.expert=?) THEN 1 ELSE 0 END) AS mine "
            f"FROM verdicts v WHERE v.run_id=? AND v.kind='rubric' {scorer_sql}", [expert, run_id, *params])[0]
        return Progress(total=row["total"] or 0, audited=row["audited"] or 0, audited_by_me=row["mine"] or 0)

    def queue(self, run: str, flt: QueueFilter | None = None, *, only: tuple[str, str] | None = None
              ) -> QueueRows:
        """Rubric verdicts matching the filter, in review order (default: lowest judge score first), as a sequence
        read a page at a time (a million-row run opens as fast as a small one).

        only=(sample id, scorer) returns just that row, ignoring the filter (to refresh one row after a save).
        """
        run_id = self.resolve(run)
        query = queue_query(self.conn.sql, run_id, flt or QueueFilter(), only)

        def read(sql: str, offset: int, limit: int) -> tuple[list[QueueRow], list[Any]]:
            rows = self.query(f"{sql} LIMIT :limit OFFSET :offset", {**query.params, "limit": limit, "offset": offset})
            human = self._human_scores(run_id, [r for r in rows if r["n_audits"]])
            return [queue_row(r, human.get((r["sample_id"], r["scorer"]), "")) for r in rows], rows

        first, raw = read(query.counted, 0, QueueRows.PAGE_SIZE)
        return QueueRows(lambda offset, limit: read(query.rows, offset, limit)[0], raw[0]["total"] if raw else 0,
                         first_page=first)

    def _human_scores(self, run_id: str, rows: list[Any]) -> dict[tuple[str, str], str]:
        """(sample id, scorer) → "alice=4, bob=3" for the audited rows of one page."""
        ids = sorted({r["sample_id"] for r in rows})
        wanted = {(r["sample_id"], r["scorer"]) for r in rows}
        scores: dict[tuple[str, str], list[tuple[str, int]]] = {}
        for start in range(0, len(ids), 500):       # stay under SQLite's bound-parameter limit
            chunk = ids[start:start + 500]
            for r in self.query("SELECT sample_id, scorer, expert, score FROM audit_responses WHERE run_id=? "
                                f"AND sample_id IN ({','.join('?' * len(chunk))})", [run_id, *chunk]):
                if (r["sample_id"], r["scorer"]) in wanted:
                    scores.setdefault((r["sample_id"], r["scorer"]), []).append((r["expert"], r["score"]))
        return {key: human_text(pairs) for key, pairs in scores.items()}

    def with_text(self, run: str, rows: list[QueueRow]) -> list[QueueRow]:
        """The same rows with the question (first 120 characters) and intent filled in, for one page of the queue."""
        run_id = self.resolve(run)
        ids = sorted({r.sample_id for r in rows})
        text: dict[str, tuple[str, str]] = {}
        question, intent = (self.conn.sql.json_text("sample_json", f"$.{key}") for key in ("question", "intent"))
        for start in range(0, len(ids), 500):       # stay under SQLite's bound-parameter limit
            chunk = ids[start:start + 500]
            for r in self.query(
                    f"SELECT sample_id, substr(COALESCE({question}, ''), 1, 120) AS q, "
                    f"COALESCE({intent}, '') AS intent FROM run_samples "
                    f"WHERE run_id=? AND sample_id IN ({','.join('?' * len(chunk))})", [run_id, *chunk]):
                text[r["sample_id"]] = (r["q"], r["intent"])
        return [row.model_copy(update={"question": text.get(row.sample_id, ("", ""))[0],
                                       "intent": text.get(row.sample_id, ("", ""))[1]}) for row in rows]

    def versions(self, run_id: str, sample_id: str, scorer: str) -> ItemVersions:
        rows = self.query("SELECT scorer, version FROM audit_versions WHERE run_id=? AND sample_id=? "
                          "AND scorer IN (?, ?)", (run_id, sample_id, scorer, SAMPLE_LEVEL))
        found = {r["scorer"]: r["version"] for r in rows}
        return ItemVersions(item=found.get(scorer, 0), sample=found.get(SAMPLE_LEVEL, 0))

    def responses(self, run: str, *, sample_id: str | None = None, scorer: str | None = None) -> list[AuditResponse]:
        run_id = self.resolve(run)
        sql, params = "SELECT * FROM audit_responses WHERE run_id=?", [run_id]
        if sample_id is not None:
            sql, params = sql + " AND sample_id=?", [*params, sample_id]
        if scorer is not None:
            sql, params = sql + " AND scorer=?", [*params, scorer]
        return [AuditResponse(**dict(r)) for r in self.query(sql + " ORDER BY sample_id, scorer, updated_at", params)]

    def gt_edits(self, run: str, sample_id: str | None = None) -> list[GroundTruthEdit]:
        run_id = self.resolve(run)
        sql, params = "SELECT * FROM audit_gt_edits WHERE run_id=?", [run_id]
        if sample_id is not None:
            sql, params = sql + " AND sample_id=?", [*params, sample_id]
        rows = self.query(sql + " ORDER BY edit_id", params)
        return [GroundTruthEdit.from_row(r) for r in rows]

    def audit_log(self, run: str | None = None) -> list[AuditLogEntry]:
        sql, params = "SELECT * FROM audit_log", []
        if run is not None:
            sql, params = sql + " WHERE run_id=?", [self.resolve(run)]
        return [AuditLogEntry(log_id=r["log_id"], at=r["at"], expert=r["expert"], action=r["action"],
                              run_id=r["run_id"], sample_id=r["sample_id"], scorer=r["scorer"], outcome=r["outcome"],
                              payload=json.loads(r["payload_json"]))
                for r in self.query(sql + " ORDER BY log_id", params)]

    def run_sample(self, run_id: str, sample_id: str) -> Sample:
        rows = self.query("SELECT sample_json FROM run_samples WHERE run_id=? AND sample_id=?", (run_id, sample_id))
        if not rows:
            raise AuditError(f"no sample '{sample_id}' in this run", file=self.location)
        return Sample.model_validate_json(rows[0][0])

    def stored_verdict(self, run_id: str, sample_id: str, scorer: str) -> Verdict:
        rows = self.query("SELECT * FROM verdicts WHERE run_id=? AND sample_id=? AND scorer=?",
                          (run_id, sample_id, scorer))
        if not rows:
            raise AuditError(f"no verdict for sample '{sample_id}' and scorer '{scorer}' in this run",
                             file=self.location)
        return row_to_verdict(rows[0])

    def item(self, run: str, sample_id: str, scorer: str) -> AuditItem:
        """One verdict to audit, read in one snapshot: the versions an expert saves against are those of exactly
        the responses and corrections they were shown (a save landing between two reads cannot slip past)."""
        run_id = self.resolve(run)
        with self._lock, self.conn.reading():
            return self._item(run_id, sample_id, scorer)

    def _item(self, run_id: str, sample_id: str, scorer: str) -> AuditItem:
        run_name = self.query("SELECT name FROM runs WHERE run_id=?", (run_id,))[0]["name"]
        original = self.run_sample(run_id, sample_id)
        edits = self.gt_edits(run_id, sample_id)
        definition_rows = self.query("SELECT definition_json, version FROM run_scorers WHERE run_id=? AND scorer=?",
                                     (run_id, scorer))
        verdict = self.stored_verdict(run_id, sample_id, scorer)
        others = [row_to_verdict(r) for r in self.query(
            "SELECT * FROM verdicts WHERE run_id=? AND sample_id=? AND scorer != ? "
            f"ORDER BY kind DESC, {self.conn.sql.byte_order('scorer')}", (run_id, sample_id, scorer))]
        return AuditItem(
            run_id=run_id, run_name=run_name, sample=apply_corrections(original, edits), original=original,
            verdict=verdict,
            rubric=json.loads(definition_rows[0]["definition_json"]) if definition_rows else {},
            scorer_version=verdict.scorer_version or (definition_rows[0]["version"] if definition_rows else ""),
            responses=self.responses(run_id, sample_id=sample_id, scorer=scorer), gt_history=edits,
            context_marks=context_marks(edits), versions=self.versions(run_id, sample_id, scorer),
            other_verdicts=others)

    # -- writing (callers hold `with self.conn:`, the store's write transaction; audit/ and store/turn_audit.py
    # write through log_action and bump_version too) ------------------------------------------------------------
    def log_action(self, expert: str, action: str, run_id: str, sample_id: str, scorer: str, outcome: str,
                   payload: dict[str, Any]) -> None:
        self.conn.execute("INSERT INTO audit_log (at, expert, action, run_id, sample_id, scorer, outcome, payload_json)"
                          " VALUES (?,?,?,?,?,?,?,?)", (_now(), expert, action, run_id, sample_id, scorer, outcome,
                                                        json.dumps(payload, ensure_ascii=False)))

    def bump_version(self, run_id: str, sample_id: str, scorer: str, expert: str) -> int:
        return self.conn.execute(
            "INSERT INTO audit_versions VALUES (?,?,?,1,?,?) ON CONFLICT (run_id, sample_id, scorer) DO UPDATE SET "
            "version = audit_versions.version + 1, updated_by = excluded.updated_by, "
            "updated_at = excluded.updated_at RETURNING version", (run_id, sample_id, scorer, expert, _now())
        ).fetchall()[0][0]

    def _conflict(self, run_id: str, sample_id: str, scorer: str, current: ItemVersions,
                  expected: ItemVersions) -> Conflict:
        rows = self.conn.execute(
            "SELECT scorer, updated_by, updated_at FROM audit_versions WHERE run_id=? AND sample_id=? "
            "AND scorer IN (?, ?) ORDER BY updated_at DESC, scorer", (run_id, sample_id, scorer, SAMPLE_LEVEL)).fetchall()
        latest = rows[0] if rows else None
        what = []
        if current.item != expected.item:
            what.append("an expert's response to this verdict")
        if current.sample != expected.sample:
            what.append("the sample's ground truth or context marks")
        who = f" by {latest['updated_by']} at {iso_time(latest['updated_at'])}" if latest else ""
        return Conflict(message=f"This item changed since you opened it ({' and '.join(what)}{who}). "
                                "Reload to see the change, then save again.",
                        current=current, changed_by=latest["updated_by"] if latest else "",
                        changed_at=latest["updated_at"] if latest else None)

    def save_response(self, run: str, sample_id: str, scorer: str, *, expert: str, score: int, reason: str = "",
                      expected: ItemVersions) -> SaveResult:
        """Agree with the judge (score = judge score) or override it (reason required). One row per expert."""
        expert = clean_expert_name(expert)
        run_id = self.resolve(run)
        score = check_score(score)
        reason = (reason or "").strip()
        verdict = self.stored_verdict(run_id, sample_id, scorer)
        if verdict.kind != "rubric":
            raise AuditError(f"'{scorer}' is a metric; only rubric verdicts (1–5) are audited here", field="scorer")
        judge_score = verdict.score
        action = response_action(judge_score, score)
        if action == "override" and not reason:
            raise AuditError(f"a reason is required to override the judge's score {judge_score:g} with {score}",
                             field="reason", hint="say what the judge missed, so the rubric can be improved")
        payload = {"score": score, "reason": reason, "judge_score": judge_score, "response": action,
                   "scorer_version": verdict.scorer_version, "expected": expected.model_dump()}
        def write() -> None:
            upsert_response(self.conn, run_id, sample_id, scorer, expert=expert, score=score, action=action,
                            reason=reason, judge_score=judge_score, scorer_version=verdict.scorer_version, now=_now())

        return self.versioned_write("save_response", run_id, sample_id, scorer, expert=expert, payload=payload,
                                    expected=expected, write=write, changes=[action])

    def versioned_write(self, action: str, run_id: str, sample_id: str, scorer: str, *, expert: str,
                        payload: dict[str, Any], expected: ItemVersions, write: Callable[[], None],
                        changes: list[str]) -> SaveResult:
        """Run `write` if the item is still at the versions the expert saw, bump the item's version and log it;
        else log the attempt as a conflict (nothing typed is lost) and return the current versions."""
        with self._lock, self.conn:
            current = self.versions(run_id, sample_id, scorer)
            if current != expected:
                conflict = self._conflict(run_id, sample_id, scorer, current, expected)
                self.log_action(expert, action, run_id, sample_id, scorer, "conflict",
                                {**payload, "current": current.model_dump()})
                return SaveResult(ok=False, versions=current, conflict=conflict)
            write()
            item_version = self.bump_version(run_id, sample_id, scorer, expert)
            self.log_action(expert, action, run_id, sample_id, scorer, "saved", payload)
        return SaveResult(ok=True, versions=ItemVersions(item=item_version, sample=current.sample), changes=changes)

    def save_turn_verdict(self, run: str, sample_id: str, scorer: str, *, turn: int, expert: str, score: int,
                          reason: str = "", expected: ItemVersions, item: str | None = None) -> SaveResult:
        """An expert's verdict on one assistant turn of a conversation rubric (store/turn_audit.py)."""
        return save_turn_verdict(self, run, sample_id, scorer, turn=turn, expert=expert, score=score, reason=reason,
                                 expected=expected, item=item)

    def turn_verdicts(self, run: str, *, sample_id: str | None = None, scorer: str | None = None,
                      history: bool = False) -> list[ExpertTurnVerdict]:
        return turn_verdicts(self, run, sample_id=sample_id, scorer=scorer, history=history)

    def edit_ground_truth(self, run: str, sample_id: str, *, editor: str, expected_sample_version: int,
                          ground_truth: str | None = None, context_relevance: dict[int, bool] | None = None
                          ) -> SaveResult:
        """Record a new reference answer and/or relevance marks for retrieved contexts (only what changed)."""
        editor = clean_expert_name(editor)
        run_id = self.resolve(run)
        original = self.run_sample(run_id, sample_id)
        for index in context_relevance or {}:
            if not 0 <= index < len(original.contexts):
                raise AuditError(f"sample '{sample_id}' has no retrieved context #{index + 1}", field="contexts")
        with self._lock, self.conn:
            current_version = self.versions(run_id, sample_id, SAMPLE_LEVEL).sample
            attempted = {"ground_truth": ground_truth,
                         "context_relevance": {str(k): v for k, v in (context_relevance or {}).items()},
                         "expected_sample_version": expected_sample_version}
            if current_version != expected_sample_version:
                expected = ItemVersions(sample=expected_sample_version)
                current = ItemVersions(sample=current_version)
                conflict = self._conflict(run_id, sample_id, SAMPLE_LEVEL, current, expected)
                self.log_action(editor, "edit_ground_truth", run_id, sample_id, SAMPLE_LEVEL, "conflict",
                                {**attempted, "current_sample_version": current_version})
                return SaveResult(ok=False, versions=current, conflict=conflict)
            edits = self.gt_edits(run_id, sample_id)
            corrected = apply_corrections(original, edits)
            marks = context_marks(edits)
            changes: list[tuple[str, Any, Any]] = []
            if ground_truth is not None and ground_truth != corrected.ground_truth:
                changes.append((GROUND_TRUTH_FIELD, corrected.ground_truth, ground_truth))
            for index, relevant in sorted((context_relevance or {}).items()):
                before = marks[index].relevant if index in marks else None
                if before != relevant:
                    changes.append((context_field(index), before, bool(relevant)))
            if not changes:          # raised inside the transaction: it rolls back, nothing is logged
                raise AuditError("nothing changed: the ground truth and context marks are as stored")
            now = _now()
            self.conn.executemany(
                "INSERT INTO audit_gt_edits (run_id, sample_id, field, before_json, after_json, editor, edited_at)"
                " VALUES (?,?,?,?,?,?,?)",
                [(run_id, sample_id, field, json.dumps(before, ensure_ascii=False),
                  json.dumps(after, ensure_ascii=False), editor, now) for field, before, after in changes])
            version = self.bump_version(run_id, sample_id, SAMPLE_LEVEL, editor)
            self.log_action(editor, "edit_ground_truth", run_id, sample_id, SAMPLE_LEVEL, "saved",
                            {**attempted, "changes": [{"field": f, "before": b, "after": a} for f, b, a in changes]})
        return SaveResult(ok=True, versions=ItemVersions(sample=version), changes=[c[0] for c in changes])

    # -- corrected datasets ---------------------------------------------------------------------------------------
    def corrected_samples(self, run: str) -> list[tuple[Sample, Sample]]:
        """(original, corrected) for every sample of the run, in dataset order."""
        run_id = self.resolve(run)
        info = self.runs.run_info(run_id)
        by_sample: dict[str, list[GroundTruthEdit]] = {}
        for edit in self.gt_edits(run_id):
            by_sample.setdefault(edit.sample_id, []).append(edit)
        out = []
        for original in self.runs.samples(run_id):
            edits = by_sample.get(original.id, [])
            corrected = apply_corrections(original, edits)
            if edits:
                corrected = with_provenance(corrected, original, edits, run_name=info.name, run_id=run_id,
                                            dataset_path=info.config.dataset_path,
                                            dataset_hash=info.config.dataset_hash)
            out.append((original, corrected))
        return out
