"""Expert verdicts on single turns of a conversation: "the judge gave turn 4 a 4, it deserves a 2, because …".

Kept apart from `audit_responses` on purpose: a conversation rubric's judge–expert agreement (trust/, the agreement
panel) is computed on conversation-level verdicts only, while these rows say WHERE in the dialogue the expert
disagrees, which is what a rubric author needs to fix the criterion or the per-turn prompt.

Append-only: every save is a new row (triggers refuse UPDATE and DELETE, store/append_only.py), so the history of an expert's mind is
kept; the current verdict of an expert on a turn is their latest row. A save checks and bumps the audit item's
version like a conversation-level response does (rubriceval/store/audit.py), so two experts editing the same item
see each other's change instead of overwriting it silently.

Part of the AuditStore kept in its own module (it uses the store's connection, lock and version helpers); the
table is declared in store/schema.py; the store exposes `save_turn_verdict` / `turn_verdicts`.
"""
from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Evidence, Verdict
from rubriceval.data.spreadsheet import escape_cell
from rubriceval.store.audit_models import AuditError, ItemVersions, ResponseAction, SaveResult, clean_expert_name

if TYPE_CHECKING:
    from rubriceval.store.audit import AuditStore


EXPORT_COLUMNS = ("run_id", "sample_id", "scorer", "item", "turn", "expert", "score", "action", "reason",
                  "judge_score", "scorer_version", "saved_at")


class ExpertTurnVerdict(BaseModel):
    """One expert's verdict on one assistant turn of a conversation rubric's judge item."""

    entry_id: int
    run_id: str
    sample_id: str
    scorer: str
    item: str                          # the judge item the turn score belongs to (usually "judge")
    turn: int = Field(ge=1)            # turn number from 1, as in the transcript and check evidence
    expert: str
    score: int = Field(ge=1, le=5)
    action: ResponseAction             # agree / override the judge's turn score, or score a turn it did not score
    reason: str = ""
    judge_score: float | None = None   # the judge's score for this turn when the expert answered (None: none given)
    scorer_version: str = ""
    saved_at: float


def turn_scores(verdict: Verdict) -> dict[tuple[str, int], Evidence]:
    """(judge item, turn) → the judge's per-turn evidence (scope assistant_turn stores one per judged turn)."""
    return {(e.item, e.turn): e for e in verdict.evidence if e.turn is not None and e.score is not None}


def judge_item_ids(rubric: dict[str, Any]) -> list[str]:
    """The judge items of a stored rubric definition, in order (a rubric without items has the implicit 'judge')."""
    items = rubric.get("items") or []
    return [str(i.get("id")) for i in items if isinstance(i, dict) and i.get("type") == "judge"] or ["judge"]


def _definition(store: AuditStore, run_id: str, scorer: str) -> dict[str, Any]:
    rows = store.query("SELECT definition_json FROM run_scorers WHERE run_id=? AND scorer=?", (run_id, scorer))
    return json.loads(rows[0]["definition_json"]) if rows else {}


def _check_turn(store: AuditStore, run_id: str, sample_id: str, turn: int) -> None:
    sample = store.run_sample(run_id, sample_id)
    if sample.conversation is None:
        raise AuditError(f"sample '{sample_id}' is not a conversation: it has no turns to judge", field="turn")
    numbers = sample.conversation.assistant_turns
    if isinstance(turn, bool) or not isinstance(turn, int) or turn not in numbers:
        raise AuditError(f"turn {turn!r} is not an assistant turn of '{sample_id}'", field="turn",
                         hint=f"assistant turns: {', '.join(map(str, numbers))}")


def save_turn_verdict(store: AuditStore, run: str, sample_id: str, scorer: str, *, turn: int, expert: str,
                      score: int, reason: str = "", expected: ItemVersions, item: str | None = None) -> SaveResult:
    """Agree with or override the judge's score of one assistant turn (a reason is required unless the expert
    agrees), or score a turn the judge did not score on its own (scope conversation: a reason is required too)."""
    expert = clean_expert_name(expert)
    run_id = store.resolve(run)
    if isinstance(score, bool) or not isinstance(score, (int, float)) or score != int(score) or not 1 <= score <= 5:
        raise AuditError(f"score must be a whole number from 1 to 5, got {score!r}", field="score")
    score, reason = int(score), (reason or "").strip()
    verdict = store.stored_verdict(run_id, sample_id, scorer)
    if verdict.kind != "rubric":
        raise AuditError(f"'{scorer}' is a metric; only rubric verdicts are audited here", field="scorer")
    _check_turn(store, run_id, sample_id, turn)
    scored = turn_scores(verdict)
    if item is None:
        item = next((i for i, n in scored if n == turn), None) or judge_item_ids(_definition(store, run_id, scorer))[0]
    judged = scored.get((item, turn))
    judge_score = judged.score if judged is not None else None
    action: ResponseAction = ("score_unscored" if judge_score is None
                              else "agree" if score == judge_score else "override")
    if action != "agree" and not reason:
        what = (f"override the judge's score {judge_score:g} for turn {turn} with {score}" if judge_score is not None
                else f"score turn {turn}, which the judge did not score on its own")
        raise AuditError(f"a reason is required to {what}", field="reason",
                         hint="say what is wrong (or right) in this turn, so the rubric can be improved")
    row = {"run_id": run_id, "sample_id": sample_id, "scorer": scorer, "item": item, "turn": turn, "expert": expert,
           "score": score, "action": action, "reason": reason, "judge_score": judge_score,
           "scorer_version": verdict.scorer_version}
    def write() -> None:
        store.conn.execute(
            f"INSERT INTO audit_turn_verdicts ({', '.join(row)}, saved_at) VALUES ({', '.join('?' * len(row))}, ?)",
            [*row.values(), time.time()])

    return store.versioned_write("save_turn_verdict", run_id, sample_id, scorer, expert=expert,
                                 payload={**row, "expected": expected.model_dump()}, expected=expected, write=write,
                                 changes=[action])


def turn_verdicts(store: AuditStore, run: str, *, sample_id: str | None = None, scorer: str | None = None,
                  history: bool = False) -> list[ExpertTurnVerdict]:
    """Each expert's current verdict per turn (their latest row), or with history=True every row ever saved."""
    run_id = store.resolve(run)
    where, params = ["run_id=?"], [run_id]
    for column, value in (("sample_id", sample_id), ("scorer", scorer)):
        if value is not None:
            where.append(f"{column}=?")
            params.append(value)
    condition = " AND ".join(where)

    def text(column: str) -> str:
        return store.conn.sql.byte_order(column)
    latest = "" if history else (
        " AND entry_id IN (SELECT MAX(entry_id) FROM audit_turn_verdicts WHERE "
        f"{condition} GROUP BY sample_id, scorer, item, turn, expert)")
    rows = store.query(f"SELECT * FROM audit_turn_verdicts WHERE {condition}{latest} "
                       f"ORDER BY {text('sample_id')}, {text('scorer')}, turn, {text('item')}, entry_id",
                       [*params, *([] if history else params)])
    return [ExpertTurnVerdict(**dict(r)) for r in rows]


def export_turn_verdicts(store: AuditStore, run: str, out_path: str | Path, *, history: bool = False) -> Path:
    """Write the run's turn-level verdicts as JSONL (one object per line) or CSV (formula-like text escaped)."""
    rows = [v.model_dump(include=set(EXPORT_COLUMNS)) for v in turn_verdicts(store, run, history=history)]
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".csv":
        with out.open("w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=EXPORT_COLUMNS)
            writer.writeheader()
            writer.writerows({k: escape_cell(v) for k, v in r.items()} for r in rows)
    elif out.suffix.lower() == ".jsonl":
        out.write_text("".join(json.dumps({k: r[k] for k in EXPORT_COLUMNS}, ensure_ascii=False) + "\n"
                               for r in rows), encoding="utf-8")
    else:
        raise AuditError(f"cannot export turn verdicts to '{out.name}'", field="out", hint="use .jsonl or .csv")
    return out
