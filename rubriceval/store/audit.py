"""Expert audits, kept in the run store's SQLite file: responses to judge verdicts, ground-truth edits, and an
append-only log of every save attempt.

Why one file: an audit is only meaningful next to the verdicts it judges, and copying the store copies both.

Concurrency is optimistic. Every audit item (run, sample, scorer) and every sample (run, sample; scorer '') carries
a version number. A writer sends the versions it saw when it opened the item; if another expert saved in between,
the write is refused as a conflict (and logged with its full payload, so nothing typed is lost) and the expert
reloads. Saving a response checks both versions, because a ground-truth edit changes what the expert was judging.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.data.io import write_dataset
from rubriceval.data.sample import Sample
from rubriceval.errors import RubricEvalError
from rubriceval.store.runs import RunStore, _row_to_verdict
from rubriceval.verdict import Verdict

AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_responses (
  run_id TEXT NOT NULL, sample_id TEXT NOT NULL, scorer TEXT NOT NULL, expert TEXT NOT NULL,
  score INTEGER NOT NULL CHECK (score BETWEEN 1 AND 5), action TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
  judge_score REAL, scorer_version TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL, updated_at REAL NOT NULL,
  PRIMARY KEY (run_id, sample_id, scorer, expert)
);
CREATE TABLE IF NOT EXISTS audit_gt_edits (
  edit_id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, sample_id TEXT NOT NULL, field TEXT NOT NULL,
  before_json TEXT NOT NULL, after_json TEXT NOT NULL, editor TEXT NOT NULL, edited_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_gt_edits_by_sample ON audit_gt_edits (run_id, sample_id);
CREATE TABLE IF NOT EXISTS audit_versions (
  run_id TEXT NOT NULL, sample_id TEXT NOT NULL, scorer TEXT NOT NULL, version INTEGER NOT NULL,
  updated_by TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (run_id, sample_id, scorer)
);
CREATE TABLE IF NOT EXISTS audit_log (
  log_id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, expert TEXT NOT NULL, action TEXT NOT NULL,
  run_id TEXT NOT NULL, sample_id TEXT NOT NULL, scorer TEXT NOT NULL, outcome TEXT NOT NULL,
  payload_json TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_gt_edits_no_update BEFORE UPDATE ON audit_gt_edits
BEGIN SELECT RAISE(ABORT, 'ground-truth edits are append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_gt_edits_no_delete BEFORE DELETE ON audit_gt_edits
BEGIN SELECT RAISE(ABORT, 'ground-truth edits are append-only'); END;
"""

SAMPLE_LEVEL = ""          # the scorer column value of a sample's own version row (ground truth, contexts)
GROUND_TRUTH_FIELD = "ground_truth"
MAX_EXPERT_NAME = 80

QueueStatus = Literal["all", "unscored", "unaudited", "unaudited_by_me", "disagreement"]
QueueOrder = Literal["judge_asc", "judge_desc", "dataset", "gap_desc", "uncertain_first"]
ResponseAction = Literal["agree", "override", "score_unscored"]


class AuditError(RubricEvalError):
    """An audit action that cannot be saved as asked (missing reason, unknown item, bad score)."""


# -- models -----------------------------------------------------------------------------------------------------

class ItemVersions(BaseModel):
    """What the expert saw: the audit item's version and its sample's version (0 = never written)."""

    item: int = 0
    sample: int = 0


class Conflict(BaseModel):
    message: str
    current: ItemVersions
    changed_by: str = ""
    changed_at: float | None = None


class SaveResult(BaseModel):
    ok: bool
    versions: ItemVersions            # the versions after the save (or the current ones on a conflict)
    conflict: Conflict | None = None
    changes: list[str] = Field(default_factory=list)


class AuditResponse(BaseModel):
    run_id: str
    sample_id: str
    scorer: str
    expert: str
    score: int = Field(ge=1, le=5)
    action: ResponseAction
    reason: str = ""
    judge_score: float | None = None  # the judge's score when the expert answered: the suggestion they judged
    scorer_version: str = ""
    created_at: float
    updated_at: float


class GroundTruthEdit(BaseModel):
    edit_id: int
    run_id: str
    sample_id: str
    field: str                        # 'ground_truth' or 'context:<index>'
    before: Any
    after: Any
    editor: str
    edited_at: float


class AuditLogEntry(BaseModel):
    log_id: int
    at: float
    expert: str
    action: str
    run_id: str
    sample_id: str
    scorer: str
    outcome: Literal["saved", "conflict"]
    payload: dict[str, Any]


class QueueFilter(BaseModel):
    scorer: str | None = None
    tag: str | None = None
    intent: str | None = None
    score_min: float | None = Field(default=None, ge=1, le=5)
    score_max: float | None = Field(default=None, ge=1, le=5)
    status: QueueStatus = "all"
    order: QueueOrder = "judge_asc"
    expert: str = ""                  # whose audits "unaudited_by_me" and my_score refer to


class QueueRow(BaseModel):
    sample_id: str
    scorer: str
    position: int
    judge_score: float | None
    unscored_kind: str | None
    question: str = ""                # filled by AuditStore.with_text for the rows on screen
    intent: str = ""
    n_audits: int
    human_scores: str                 # "alice=4, bob=3"
    my_score: int | None
    gap: float | None                 # largest |judge − human| over the experts
    spread: float | None = None       # self-consistency: max − min of the judge's n scores (None: judged once)


class Progress(BaseModel):
    total: int                        # rubric verdicts in the run
    audited: int                      # of them, audited by at least one expert
    audited_by_me: int


class ContextMark(BaseModel):
    relevant: bool
    editor: str
    edited_at: float


class AuditItem(BaseModel):
    run_id: str
    run_name: str
    sample: Sample                    # with the experts' corrections applied
    original: Sample                  # as the run judged it
    verdict: Verdict
    rubric: dict[str, Any]            # the scorer's definition (name, criterion, score_descriptions, threshold…)
    scorer_version: str
    responses: list[AuditResponse]
    gt_history: list[GroundTruthEdit]
    context_marks: dict[int, ContextMark]
    versions: ItemVersions
    other_verdicts: list[Verdict]     # the same sample's other scorers, read-only context


class ExportSummary(BaseModel):
    path: str
    n_samples: int
    n_corrected: int


# -- the store --------------------------------------------------------------------------------------------------

def _now() -> float:
    return time.time()


def iso_time(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")


def clean_expert_name(name: str | None) -> str:
    name = " ".join((name or "").split())
    if not name:
        raise AuditError("enter your name before saving", field="expert",
                         hint="every response and edit records who made it")
    if len(name) > MAX_EXPERT_NAME:
        raise AuditError(f"name is longer than {MAX_EXPERT_NAME} characters", field="expert")
    return name


def context_field(index: int) -> str:
    return f"context:{index}"


class AuditStore:
    """Audit tables on their own connection to the run store file (autocommit; writes take BEGIN IMMEDIATE)."""

    def __init__(self, path: str | Path, *, must_exist: bool = True):
        self.path = Path(path)
        if must_exist and not self.path.is_file():
            raise AuditError("no run store here", file=str(self.path), hint="run `rubriceval run` first, or pass --store")
        self.runs = RunStore(self.path)
        self._lock = threading.RLock()
        self.conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA busy_timeout=30000")
        with self._lock:
            self.conn.executescript("BEGIN;" + AUDIT_SCHEMA + "COMMIT;")

    def close(self) -> None:
        with self._lock:
            self.conn.close()
        self.runs.close()

    def __enter__(self) -> "AuditStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------------------------------
    def _query(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def resolve(self, run: str) -> str:
        return self.runs.resolve(run)

    def rubric_scorers(self, run: str) -> list[dict[str, Any]]:
        return [s for s in self.runs.scorers(run) if s["kind"] == "rubric"]

    def facets(self, run: str) -> dict[str, list[str]]:
        """Filter choices: rubric scorers with verdicts, tags and intents present in the run."""
        run_id = self.resolve(run)
        scorers = [r[0] for r in self._query(
            "SELECT DISTINCT scorer FROM verdicts WHERE run_id=? AND kind='rubric' ORDER BY scorer", (run_id,))]
        tags = [r[0] for r in self._query(
            "SELECT DISTINCT t.value FROM run_samples s, json_each(s.sample_json, '$.tags') t "
            "WHERE s.run_id=? ORDER BY 1", (run_id,))]
        intents = [r[0] for r in self._query(
            "SELECT DISTINCT json_extract(sample_json, '$.intent') FROM run_samples WHERE run_id=? "
            "AND COALESCE(json_extract(sample_json, '$.intent'), '') != '' ORDER BY 1", (run_id,))]
        return {"scorers": scorers, "tags": tags, "intents": intents}

    def progress(self, run: str, expert: str = "", scorer: str | None = None) -> Progress:
        run_id = self.resolve(run)
        scorer_sql, params = ("AND v.scorer = ?", [scorer]) if scorer else ("", [])
        row = self._query(
            "SELECT COUNT(*) AS total, "
            "SUM(EXISTS (SELECT 1 FROM audit_responses r WHERE r.run_id=v.run_id AND r.sample_id=v.sample_id "
            "            AND r.scorer=v.scorer)) AS audited, "
            "SUM(EXISTS (SELECT 1 FROM audit_responses r WHERE r.run_id=v.run_id AND r.sample_id=v.sample_id "
            "            AND r.scorer=v.scorer AND r.expert=?)) AS mine "
            f"FROM verdicts v WHERE v.run_id=? AND v.kind='rubric' {scorer_sql}", [expert, run_id, *params])[0]
        return Progress(total=row["total"] or 0, audited=row["audited"] or 0, audited_by_me=row["mine"] or 0)

    def queue(self, run: str, flt: QueueFilter | None = None, *, only: tuple[str, str] | None = None
              ) -> list[QueueRow]:
        """Rubric verdicts matching the filter, in review order (default: lowest judge score first).

        only=(sample id, scorer) returns just that row, ignoring the filter (to refresh one row after a save).
        """
        flt = flt or QueueFilter()
        run_id = self.resolve(run)
        where = ["v.run_id = :run", "v.kind = 'rubric'"]
        params: dict[str, Any] = {"run": run_id, "me": flt.expert}
        if only is not None:
            where += ["v.sample_id = :only_sample", "v.scorer = :only_scorer"]
            params.update(only_sample=only[0], only_scorer=only[1])
            flt = QueueFilter(expert=flt.expert)
        if flt.scorer:
            where.append("v.scorer = :scorer")
            params["scorer"] = flt.scorer
        if flt.intent:
            where.append("json_extract(s.sample_json, '$.intent') = :intent")
            params["intent"] = flt.intent
        if flt.tag:
            where.append("EXISTS (SELECT 1 FROM json_each(s.sample_json, '$.tags') t WHERE t.value = :tag)")
            params["tag"] = flt.tag
        if flt.score_min is not None:
            where.append("v.score >= :smin")
            params["smin"] = flt.score_min
        if flt.score_max is not None:
            where.append("v.score <= :smax")
            params["smax"] = flt.score_max
        status_sql = {
            "all": None,
            "unscored": "v.score IS NULL",
            "unaudited": "a.n_audits IS NULL",
            "unaudited_by_me": "a.my_score IS NULL",
            "disagreement": "a.hmin IS NOT NULL AND v.score IS NOT NULL AND (a.hmin != v.score OR a.hmax != v.score)",
        }[flt.status]
        if status_sql:
            where.append(status_sql)
        order_sql = {
            # Unscored verdicts have no score to sort by; they go last here and have their own filter.
            "judge_asc": "v.score IS NULL, v.score, s.position, v.scorer",
            "judge_desc": "v.score IS NULL, v.score DESC, s.position, v.scorer",
            "dataset": "s.position, v.scorer",
            "gap_desc": "gap IS NULL, gap DESC, v.score, s.position, v.scorer",
            # Self-consistency spread (max − min of the n judgements): the judge's own doubt. Judged-once last.
            "uncertain_first": "spread IS NULL, spread DESC, v.score IS NULL, v.score, s.position, v.scorer",
        }[flt.order]
        # The sample's text is not read here (parsing 10k JSON rows is the slow part); `with_text` adds it per page.
        rows = self._query(
            "WITH a AS (SELECT sample_id, scorer, COUNT(*) AS n_audits, "
            "  GROUP_CONCAT(expert || '=' || score, ', ') AS human, "
            "  MAX(CASE WHEN expert = :me THEN score END) AS my_score, MIN(score) AS hmin, MAX(score) AS hmax "
            "  FROM audit_responses WHERE run_id = :run GROUP BY sample_id, scorer) "
            "SELECT v.sample_id, v.scorer, v.score, v.unscored_kind, s.position, "
            "  json_extract(v.details_json, '$.self_consistency.spread') AS spread, "
            "  COALESCE(a.n_audits, 0) AS n_audits, COALESCE(a.human, '') AS human, a.my_score, "
            "  CASE WHEN v.score IS NULL OR a.hmin IS NULL THEN NULL "
            "       ELSE MAX(ABS(a.hmin - v.score), ABS(a.hmax - v.score)) END AS gap "
            "FROM verdicts v JOIN run_samples s ON s.run_id = v.run_id AND s.sample_id = v.sample_id "
            "LEFT JOIN a ON a.sample_id = v.sample_id AND a.scorer = v.scorer "
            f"WHERE {' AND '.join(where)} ORDER BY {order_sql}", params)
        return [QueueRow(
            sample_id=r["sample_id"], scorer=r["scorer"], position=r["position"], judge_score=r["score"],
            unscored_kind=r["unscored_kind"], question="", intent="", n_audits=r["n_audits"],
            human_scores=r["human"], my_score=r["my_score"], gap=r["gap"], spread=r["spread"]) for r in rows]

    def with_text(self, run: str, rows: list[QueueRow]) -> list[QueueRow]:
        """The same rows with the question (first 120 characters) and intent filled in, for one page of the queue."""
        run_id = self.resolve(run)
        ids = sorted({r.sample_id for r in rows})
        text: dict[str, tuple[str, str]] = {}
        for start in range(0, len(ids), 500):       # stay under SQLite's bound-parameter limit
            chunk = ids[start:start + 500]
            for r in self._query(
                    "SELECT sample_id, substr(COALESCE(json_extract(sample_json, '$.question'), ''), 1, 120) AS q, "
                    "COALESCE(json_extract(sample_json, '$.intent'), '') AS intent FROM run_samples "
                    f"WHERE run_id=? AND sample_id IN ({','.join('?' * len(chunk))})", [run_id, *chunk]):
                text[r["sample_id"]] = (r["q"], r["intent"])
        return [row.model_copy(update={"question": text.get(row.sample_id, ("", ""))[0],
                                       "intent": text.get(row.sample_id, ("", ""))[1]}) for row in rows]

    def versions(self, run_id: str, sample_id: str, scorer: str) -> ItemVersions:
        rows = self._query("SELECT scorer, version FROM audit_versions WHERE run_id=? AND sample_id=? "
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
        return [AuditResponse(**dict(r)) for r in self._query(sql + " ORDER BY sample_id, scorer, updated_at", params)]

    def gt_edits(self, run: str, sample_id: str | None = None) -> list[GroundTruthEdit]:
        run_id = self.resolve(run)
        sql, params = "SELECT * FROM audit_gt_edits WHERE run_id=?", [run_id]
        if sample_id is not None:
            sql, params = sql + " AND sample_id=?", [*params, sample_id]
        rows = self._query(sql + " ORDER BY edit_id", params)
        return [GroundTruthEdit(edit_id=r["edit_id"], run_id=r["run_id"], sample_id=r["sample_id"], field=r["field"],
                                before=json.loads(r["before_json"]), after=json.loads(r["after_json"]),
                                editor=r["editor"], edited_at=r["edited_at"]) for r in rows]

    def audit_log(self, run: str | None = None) -> list[AuditLogEntry]:
        sql, params = "SELECT * FROM audit_log", []
        if run is not None:
            sql, params = sql + " WHERE run_id=?", [self.resolve(run)]
        return [AuditLogEntry(log_id=r["log_id"], at=r["at"], expert=r["expert"], action=r["action"],
                              run_id=r["run_id"], sample_id=r["sample_id"], scorer=r["scorer"], outcome=r["outcome"],
                              payload=json.loads(r["payload_json"]))
                for r in self._query(sql + " ORDER BY log_id", params)]

    def _sample_row(self, run_id: str, sample_id: str) -> Sample:
        rows = self._query("SELECT sample_json FROM run_samples WHERE run_id=? AND sample_id=?", (run_id, sample_id))
        if not rows:
            raise AuditError(f"no sample '{sample_id}' in this run", file=str(self.path))
        return Sample.model_validate_json(rows[0][0])

    def _verdict(self, run_id: str, sample_id: str, scorer: str) -> Verdict:
        rows = self._query("SELECT * FROM verdicts WHERE run_id=? AND sample_id=? AND scorer=?",
                           (run_id, sample_id, scorer))
        if not rows:
            raise AuditError(f"no verdict for sample '{sample_id}' and scorer '{scorer}' in this run",
                             file=str(self.path))
        return _row_to_verdict(rows[0])

    def item(self, run: str, sample_id: str, scorer: str) -> AuditItem:
        run_id = self.resolve(run)
        run_name = self._query("SELECT name FROM runs WHERE run_id=?", (run_id,))[0]["name"]
        original = self._sample_row(run_id, sample_id)
        edits = self.gt_edits(run_id, sample_id)
        definition_rows = self._query("SELECT definition_json, version FROM run_scorers WHERE run_id=? AND scorer=?",
                                      (run_id, scorer))
        verdict = self._verdict(run_id, sample_id, scorer)
        others = [_row_to_verdict(r) for r in self._query(
            "SELECT * FROM verdicts WHERE run_id=? AND sample_id=? AND scorer != ? ORDER BY kind DESC, scorer",
            (run_id, sample_id, scorer))]
        return AuditItem(
            run_id=run_id, run_name=run_name, sample=apply_corrections(original, edits), original=original,
            verdict=verdict,
            rubric=json.loads(definition_rows[0]["definition_json"]) if definition_rows else {},
            scorer_version=verdict.scorer_version or (definition_rows[0]["version"] if definition_rows else ""),
            responses=self.responses(run_id, sample_id=sample_id, scorer=scorer), gt_history=edits,
            context_marks=context_marks(edits), versions=self.versions(run_id, sample_id, scorer),
            other_verdicts=others)

    # -- writing --------------------------------------------------------------------------------------------------
    def _begin(self) -> None:
        # IMMEDIATE takes the write lock now, so the version check and the write see the same state.
        self.conn.execute("BEGIN IMMEDIATE")

    def _log(self, expert: str, action: str, run_id: str, sample_id: str, scorer: str, outcome: str,
             payload: dict[str, Any]) -> None:
        self.conn.execute("INSERT INTO audit_log (at, expert, action, run_id, sample_id, scorer, outcome, payload_json)"
                          " VALUES (?,?,?,?,?,?,?,?)", (_now(), expert, action, run_id, sample_id, scorer, outcome,
                                                        json.dumps(payload, ensure_ascii=False)))

    def _bump(self, run_id: str, sample_id: str, scorer: str, expert: str) -> int:
        self.conn.execute(
            "INSERT INTO audit_versions VALUES (?,?,?,1,?,?) ON CONFLICT (run_id, sample_id, scorer) DO UPDATE SET "
            "version = version + 1, updated_by = excluded.updated_by, updated_at = excluded.updated_at",
            (run_id, sample_id, scorer, expert, _now()))
        return self.conn.execute("SELECT version FROM audit_versions WHERE run_id=? AND sample_id=? AND scorer=?",
                                 (run_id, sample_id, scorer)).fetchone()[0]

    def _conflict(self, run_id: str, sample_id: str, scorer: str, current: ItemVersions,
                  expected: ItemVersions) -> Conflict:
        rows = self.conn.execute(
            "SELECT scorer, updated_by, updated_at FROM audit_versions WHERE run_id=? AND sample_id=? "
            "AND scorer IN (?, ?) ORDER BY updated_at DESC", (run_id, sample_id, scorer, SAMPLE_LEVEL)).fetchall()
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
        if isinstance(score, bool) or not isinstance(score, (int, float)) or score != int(score) \
                or not 1 <= score <= 5:
            raise AuditError(f"score must be a whole number from 1 to 5, got {score!r}", field="score")
        score = int(score)
        reason = (reason or "").strip()
        verdict = self._verdict(run_id, sample_id, scorer)
        if verdict.kind != "rubric":
            raise AuditError(f"'{scorer}' is a metric; only rubric verdicts (1–5) are audited here", field="scorer")
        judge_score = verdict.score
        action: ResponseAction = ("score_unscored" if judge_score is None
                                  else "agree" if score == judge_score else "override")
        if action == "override" and not reason:
            raise AuditError(f"a reason is required to override the judge's score {judge_score:g} with {score}",
                             field="reason", hint="say what the judge missed, so the rubric can be improved")
        payload = {"score": score, "reason": reason, "judge_score": judge_score, "response": action,
                   "scorer_version": verdict.scorer_version, "expected": expected.model_dump()}
        with self._lock:
            self._begin()
            try:
                current = self.versions(run_id, sample_id, scorer)
                if current != expected:
                    conflict = self._conflict(run_id, sample_id, scorer, current, expected)
                    self._log(expert, "save_response", run_id, sample_id, scorer, "conflict",
                              {**payload, "current": current.model_dump()})
                    self.conn.execute("COMMIT")
                    return SaveResult(ok=False, versions=current, conflict=conflict)
                now = _now()
                self.conn.execute(
                    "INSERT INTO audit_responses VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT (run_id, sample_id, scorer, expert) DO UPDATE SET score=excluded.score, "
                    "action=excluded.action, reason=excluded.reason, judge_score=excluded.judge_score, "
                    "scorer_version=excluded.scorer_version, updated_at=excluded.updated_at",
                    (run_id, sample_id, scorer, expert, score, action, reason, judge_score, verdict.scorer_version,
                     now, now))
                item_version = self._bump(run_id, sample_id, scorer, expert)
                self._log(expert, "save_response", run_id, sample_id, scorer, "saved", payload)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        return SaveResult(ok=True, versions=ItemVersions(item=item_version, sample=current.sample), changes=[action])

    def edit_ground_truth(self, run: str, sample_id: str, *, editor: str, expected_sample_version: int,
                          ground_truth: str | None = None, context_relevance: dict[int, bool] | None = None
                          ) -> SaveResult:
        """Record a new reference answer and/or relevance marks for retrieved contexts (only what changed)."""
        editor = clean_expert_name(editor)
        run_id = self.resolve(run)
        original = self._sample_row(run_id, sample_id)
        for index in context_relevance or {}:
            if not 0 <= index < len(original.contexts):
                raise AuditError(f"sample '{sample_id}' has no retrieved context #{index + 1}", field="contexts")
        with self._lock:
            self._begin()
            try:
                current_version = self.versions(run_id, sample_id, SAMPLE_LEVEL).sample
                attempted = {"ground_truth": ground_truth,
                             "context_relevance": {str(k): v for k, v in (context_relevance or {}).items()},
                             "expected_sample_version": expected_sample_version}
                if current_version != expected_sample_version:
                    expected = ItemVersions(sample=expected_sample_version)
                    current = ItemVersions(sample=current_version)
                    conflict = self._conflict(run_id, sample_id, SAMPLE_LEVEL, current, expected)
                    self._log(editor, "edit_ground_truth", run_id, sample_id, SAMPLE_LEVEL, "conflict",
                              {**attempted, "current_sample_version": current_version})
                    self.conn.execute("COMMIT")
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
                if not changes:
                    self.conn.execute("ROLLBACK")
                    raise AuditError("nothing changed: the ground truth and context marks are as stored")
                now = _now()
                self.conn.executemany(
                    "INSERT INTO audit_gt_edits (run_id, sample_id, field, before_json, after_json, editor, edited_at)"
                    " VALUES (?,?,?,?,?,?,?)",
                    [(run_id, sample_id, field, json.dumps(before, ensure_ascii=False),
                      json.dumps(after, ensure_ascii=False), editor, now) for field, before, after in changes])
                version = self._bump(run_id, sample_id, SAMPLE_LEVEL, editor)
                self._log(editor, "edit_ground_truth", run_id, sample_id, SAMPLE_LEVEL, "saved",
                          {**attempted, "changes": [{"field": f, "before": b, "after": a} for f, b, a in changes]})
                self.conn.execute("COMMIT")
            except AuditError:
                raise
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
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


# -- corrections as pure functions (the export and the item view share them) -------------------------------------

def context_marks(edits: list[GroundTruthEdit]) -> dict[int, ContextMark]:
    """The latest relevance mark per retrieved context index."""
    marks: dict[int, ContextMark] = {}
    for edit in edits:
        if edit.field.startswith("context:"):
            marks[int(edit.field.split(":", 1)[1])] = ContextMark(relevant=bool(edit.after), editor=edit.editor,
                                                                  edited_at=edit.edited_at)
    return marks


def apply_corrections(original: Sample, edits: list[GroundTruthEdit]) -> Sample:
    """The sample with the latest ground truth; contexts marked relevant join reference_contexts, irrelevant leave.

    Why reference_contexts: it is the field the context precision/recall metrics compare retrieval against, so an
    expert's relevance mark changes the sample's input_hash and the row is re-scored.
    """
    if not edits:
        return original
    ground_truth = original.ground_truth
    for edit in edits:
        if edit.field == GROUND_TRUTH_FIELD:
            ground_truth = edit.after
    reference = list(original.reference_contexts)
    marks = context_marks(edits)
    for index, mark in sorted(marks.items()):
        text = original.contexts[index]
        if mark.relevant and text not in reference:
            reference.append(text)
        elif not mark.relevant and text in reference:
            reference = [r for r in reference if r != text]
    metadata = dict(original.metadata)
    if marks:
        metadata["context_relevance"] = {str(i): m.relevant for i, m in sorted(marks.items())}
    return original.model_copy(update={"ground_truth": ground_truth, "reference_contexts": reference,
                                       "metadata": metadata})


def with_provenance(corrected: Sample, original: Sample, edits: list[GroundTruthEdit], *, run_name: str,
                    run_id: str, dataset_path: str = "", dataset_hash: str = "") -> Sample:
    """Stamp who changed what, when, from which value and run, into the corrected sample's metadata."""
    latest = max(edits, key=lambda e: (e.edited_at, e.edit_id))
    editors = sorted({e.editor for e in edits})
    previous: dict[str, Any] = {}
    if corrected.ground_truth != original.ground_truth:
        previous["ground_truth"] = original.ground_truth
    if corrected.reference_contexts != original.reference_contexts:
        previous["reference_contexts"] = original.reference_contexts
    metadata = {
        **corrected.metadata,
        "edited_by": ", ".join(editors),
        "edited_at": iso_time(latest.edited_at),
        "previous": previous,
        "source_run": run_name,
        "source_run_id": run_id,
        "source_dataset": dataset_path,
        "source_dataset_hash": dataset_hash,
        "corrections": [{"field": e.field, "before": e.before, "after": e.after, "edited_by": e.editor,
                         "edited_at": iso_time(e.edited_at)} for e in edits],
    }
    return corrected.model_copy(update={"metadata": metadata})


def changed_samples(store_path: str | Path, run: str) -> list[Sample]:
    """Samples whose expert corrections change what a scorer reads (input_hash differs from the judged row).

    For `rubriceval run --rescore-changed`: re-score exactly these rows.
    """
    with AuditStore(store_path) as store:
        return [corrected for original, corrected in store.corrected_samples(run)
                if corrected.input_hash() != original.input_hash()]


def export_corrected_dataset(store_path: str | Path, run: str, out_path: str | Path) -> ExportSummary:
    """Write the run's dataset with the experts' corrections as a new version (.jsonl, .csv or .xlsx).

    Corrected rows carry provenance in metadata: edited_by, edited_at, previous values, source run and dataset.
    """
    with AuditStore(store_path) as store:
        pairs = store.corrected_samples(run)
    samples = [corrected for _, corrected in pairs]
    path = write_dataset(samples, out_path)
    n_corrected = sum(1 for original, corrected in pairs if corrected is not original)
    return ExportSummary(path=str(path), n_samples=len(samples), n_corrected=n_corrected)
