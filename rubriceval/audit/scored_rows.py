"""A stored run's samples as segments read them (metadata, tags, intent, first/last turn time) beside their verdicts'
scores, a span of dataset positions at a time: memory stays flat whatever the run's size."""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from rubriceval.audit.official import OfficialScores
from rubriceval.data.segment_values import SampleKeys
from rubriceval.store.db import Database

SPAN = 2000          # dataset positions per read
SCORECARD, FATAL = "scorecard", "fatal"      # a scorecard total's row kind, and its details when a fatal item hit
AWAITING = "awaiting_review"     # a scorecard total's details when it awaits a reviewer (issues 39, 44): no score,
                                 # and not unscored (stored with no unscored_reason)


class ScoredRow(NamedTuple):
    scorer: str
    kind: str
    score: float | None               # the official score (machine_only: the judge's)
    details_json: str
    human: bool = False               # the official score is a human decision
    machine: float | None = None      # the judge's score, when a human decided (or the verdict is pending)
    pending: bool = False             # a rubric verdict pending review (issue 44): no score yet, not unscored


class OfficialView(NamedTuple):
    """What a run's rows are read with: official scores (audit/official.py) and the scorecard verdicts a person
    changed, official (audit/scorecard_official.decided_verdicts); empty with machine_only."""

    scores: OfficialScores
    scorecards: Mapping[tuple[str, str], Any]


def official_view(store: Any, run_id: str, *, machine_only: bool = False) -> OfficialView:
    if machine_only:
        return OfficialView(OfficialScores({}, machine_only=True), {})
    scores = OfficialScores.load(store.conn, run_id)
    db = Database(store.path, read_only=True)
    try:
        cards = has_scorecard_rows(db, run_id)
    finally:
        db.close()
    if not cards:
        return OfficialView(scores, {})
    from rubriceval.audit.scorecard_official import decided_verdicts

    return OfficialView(scores, decided_verdicts(store, run_id, scores))


def _turn_time(db: Database, index: int) -> str:
    """The timestamp of a conversation's turn `index` (0 first, -1 last) in sample_json, as SQL text."""
    if db.engine == "sqlite":
        return f"json_extract(d.sample_json, '$.conversation.turns[{'#-1' if index < 0 else index}].timestamp')"
    return f"(CAST(d.sample_json AS jsonb) #>> '{{conversation,turns,{index},timestamp}}')"


def sample_keys_columns(db: Database) -> str:
    sql = db.sql
    return (f"d.sample_id, {sql.json_text('d.sample_json', '$.metadata')}, {sql.json_text('d.sample_json', '$.tags')}, "
            f"{sql.json_text('d.sample_json', '$.intent')}, {_turn_time(db, 0)}, {_turn_time(db, -1)}")


def to_keys(row: Any) -> SampleKeys:
    return SampleKeys(row[0], json.loads(row[1]) if row[1] else {}, json.loads(row[2]) if row[2] else [],
                      row[3] or "", row[4], row[5])


def dataset_of(db: Database, run_id: str) -> str:
    return db.execute("SELECT dataset_id FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0]


def dataset_keys(db: Database, dataset_id: str, span: int = SPAN) -> Iterator[list[SampleKeys]]:
    """Every sample of a stored dataset as SampleKeys, in dataset order, `span` at a time."""
    for low, high in _spans(db, dataset_id, span):
        rows = db.execute(f"SELECT {sample_keys_columns(db)} FROM dataset_samples d WHERE d.dataset_id = ? "
                          "AND d.position >= ? AND d.position < ? ORDER BY d.position", (dataset_id, low, high)).fetchall()
        if rows:
            yield [to_keys(r) for r in rows]


def _spans(db: Database, dataset_id: str, span: int) -> Iterator[tuple[int, int]]:
    end = db.execute("SELECT MAX(position) FROM dataset_samples WHERE dataset_id = ?", (dataset_id,)).fetchone()[0]
    for low in range(0, (end if end is not None else -1) + 1, span):
        yield low, low + span


def has_scorecard_rows(db: Database, run_id: str) -> bool:
    """Whether the run has scorecard verdicts (their table exists only once a scorecard was run in the store)."""
    try:
        return db.execute("SELECT 1 FROM scorecard_verdicts WHERE run_id = ? LIMIT 1", (run_id,)).fetchone() is not None
    except Exception:              # no such table (autocommit on both engines: nothing to roll back)
        return False


def scorecard_thresholds(db: Database, run_id: str) -> dict[str, float | None]:
    """scorecard id → its pass_total (a total at or above it passes), for the run's scorecards."""
    if not has_scorecard_rows(db, run_id):
        return {}
    out: dict[str, float | None] = {}
    for scorecard, definition in db.execute("SELECT scorecard, definition_json FROM scorecard_defs WHERE run_id = ?",
                                            (run_id,)):
        value = json.loads(definition).get("pass_total")
        out[scorecard] = None if value is None else float(value)
    return out


def run_rows(db: Database, run_id: str, span: int = SPAN, *, details: bool = False, view: OfficialView | None = None
             ) -> Iterator[list[tuple[SampleKeys, list[ScoredRow]]]]:
    """Each sample of a run with its verdicts (scorer, kind, official score, details JSON when asked), in dataset
    order. `view`: official_view(…) (None: official scores of verdicts, scorecard totals as stored)."""
    dataset_id = dataset_of(db, run_id)
    detail = "v.details_json" if details else "''"
    has_scorecards = has_scorecard_rows(db, run_id)
    # official scores: the latest human decision, else the judge's
    official = view.scores if view is not None else OfficialScores.load(db, run_id)
    decided_cards = view.scorecards if view is not None else {}
    for low, high in _spans(db, dataset_id, span):
        samples = db.execute(f"SELECT {sample_keys_columns(db)} FROM dataset_samples d WHERE d.dataset_id = ? "
                             "AND d.position >= ? AND d.position < ? ORDER BY d.position",
                             (dataset_id, low, high)).fetchall()
        if not samples:
            continue
        verdicts: dict[str, list[ScoredRow]] = {}
        for r in db.execute(f"SELECT v.sample_id, v.scorer, v.kind, v.score, {detail} FROM dataset_samples d "
                            "JOIN verdicts v ON v.run_id = ? AND v.sample_id = d.sample_id WHERE d.dataset_id = ? "
                            "AND d.position >= ? AND d.position < ?", (run_id, dataset_id, low, high)):
            decision = official.decision(r[0], r[1])
            verdicts.setdefault(r[0], []).append(
                ScoredRow(r[1], r[2], decision.score, r[4], True, r[3]) if decision is not None else
                ScoredRow(r[1], r[2], None, r[4], False, r[3], True) if official.is_pending(r[0], r[1]) else
                ScoredRow(r[1], r[2], r[3], r[4]))
        if has_scorecards:            # scorecard totals beside the verdicts (rubriceval/store/scorecards.py)
            for r in db.execute("SELECT c.sample_id, c.scorecard, c.total, c.fatal, c.unscored_reason "
                                "FROM dataset_samples d "
                                "JOIN scorecard_verdicts c ON c.run_id = ? AND c.sample_id = d.sample_id "
                                "WHERE d.dataset_id = ? AND d.position >= ? AND d.position < ?",
                                (run_id, dataset_id, low, high)):
                decided = decided_cards.get((r[0], r[1]))
                if decided is not None:         # a person changed it: its official total and fatal items
                    row = ScoredRow(r[1], SCORECARD, decided.totals.total, FATAL if decided.totals.fatal else
                                    AWAITING if decided.totals.awaiting_review else "", True, r[2])
                elif (decision := official.decision(r[0], r[1])) is not None:
                    row = ScoredRow(r[1], SCORECARD, decision.score, FATAL if r[3] else "", True, r[2])
                else:
                    row = ScoredRow(r[1], SCORECARD, r[2], FATAL if r[3] else
                                    AWAITING if r[2] is None and r[4] is None else "")
                verdicts.setdefault(r[0], []).append(row)
        yield [(to_keys(s), sorted(verdicts.get(s[0], []))) for s in samples]
