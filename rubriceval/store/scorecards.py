"""Scorecard verdicts in the run store, beside the run's verdicts: tables of their own (declared in store/schema.py),
so the rubric and metric reports read exactly what they read before.

scorecard_defs      the exact scorecard version a run started with (a resume scores with it, never a newer file);
scorecard_verdicts  one row per (run, sample, scorecard): the total (NULL: unscored, or awaiting review — the verdict
                    says which, with the items that wait and the total's range), fatal flag, the whole verdict.
A verdict saved again replaces the stored one, so a resumed run never duplicates a row.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import ScorecardVerdict

if TYPE_CHECKING:       # pandas only for the frames: a run that never asks for one never loads it
    import pandas as pd

_SAVE = ("INSERT INTO scorecard_verdicts (run_id, sample_id, scorecard, version, total, fatal, unscored_reason, "
         "verdict_json, created_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, sample_id, scorecard) DO UPDATE "
         "SET version = excluded.version, total = excluded.total, fatal = excluded.fatal, "
         "unscored_reason = excluded.unscored_reason, verdict_json = excluded.verdict_json, "
         "created_at = excluded.created_at")


class ScorecardStore:
    """Scorecard rows of a `RunStore` (SQLite or PostgreSQL: its connection and its lock)."""

    def __init__(self, runs: Any):
        self.runs = runs
        self.conn = runs.conn
        self._lock = runs._lock

    def register(self, run: str, cards: Iterable[Scorecard]) -> None:
        run_id = self.runs.resolve(run)
        with self._lock, self.conn:
            self.conn.executemany(
                "INSERT INTO scorecard_defs VALUES (?,?,?,?) ON CONFLICT (run_id, scorecard) DO NOTHING",
                [(run_id, c.id, c.version_tag, c.model_dump_json()) for c in cards])

    def cards(self, run: str) -> list[Scorecard]:
        run_id = self.runs.resolve(run)
        with self._lock:
            rows = self.conn.execute("SELECT definition_json FROM scorecard_defs WHERE run_id=? ORDER BY scorecard",
                                     (run_id,)).fetchall()
        return [Scorecard.model_validate_json(r[0]) for r in rows]

    def done(self, run_id: str, card_id: str, sample_ids: Sequence[str]) -> set[str]:
        if not sample_ids:
            return set()
        with self._lock:
            rows = self.conn.execute(
                f"SELECT sample_id FROM scorecard_verdicts WHERE run_id=? AND scorecard=? AND sample_id IN "
                f"({','.join('?' * len(sample_ids))})", (run_id, card_id, *sample_ids)).fetchall()
        return {r[0] for r in rows}

    def count(self, run_id: str) -> int:
        """Scorecard verdicts stored for the run (every scorecard)."""
        with self._lock:
            return int(self.conn.execute("SELECT COUNT(*) FROM scorecard_verdicts WHERE run_id=?",
                                         (run_id,)).fetchone()[0])

    def save(self, run_id: str, verdicts: Sequence[ScorecardVerdict]) -> None:
        if not verdicts:
            return
        now = time.time()
        with self._lock, self.conn:
            self.conn.executemany(_SAVE, [
                (run_id, v.sample_id, v.scorecard, v.version, v.totals.total, int(bool(v.totals.fatal)),
                 v.totals.unscored_reason, v.model_dump_json(), now) for v in verdicts])

    def verdicts(self, run: str, card_id: str | None = None) -> list[ScorecardVerdict]:
        """In dataset order."""
        run_id = self.runs.resolve(run)
        where, params = ("AND v.scorecard = ?", (card_id,)) if card_id else ("", ())
        with self._lock:
            rows = self.conn.execute(
                "SELECT v.verdict_json FROM scorecard_verdicts v JOIN run_samples s ON s.run_id = v.run_id AND "
                f"s.sample_id = v.sample_id WHERE v.run_id = ? {where} ORDER BY s.position, v.scorecard",
                (run_id, *params)).fetchall()
        return [ScorecardVerdict.model_validate_json(r[0]) for r in rows]


def scorecard_frame(card: Scorecard, verdicts: Sequence[ScorecardVerdict]) -> pd.DataFrame:
    """One row per conversation: total (None when unscored or awaiting review), fatal items, `awaiting_review` (the
    range a waiting total can still reach, "92–100"; "" when nothing waits), each dimension's subtotal, and a column
    per item: its signed points (−20, 0 …), or "fatal" (a hit 一票否决 item), "N/A", "unscored", "undecided" (the
    judge could not tell), "pending" (a machine decision pending review: issue 44)."""
    import pandas as pd

    rows = []
    for v in verdicts:
        points = {p.item: p.points for p in v.totals.items}
        row: dict[str, Any] = {"sample_id": v.sample_id, "version": v.version, "total": v.totals.total,
                               "clamped": v.totals.clamped, "fatal": ", ".join(v.totals.fatal),
                               "unscored_reason": v.totals.unscored_reason or "",
                               "awaiting_review": _range(v.totals) if v.totals.awaiting_review else ""}
        row.update({f"dim:{d.dimension}": d.points for d in v.totals.dimensions})
        for outcome in v.outcomes:
            if outcome.item in v.totals.fatal:
                row[outcome.item] = "fatal"
            elif outcome.awaiting_review:
                row[outcome.item] = "undecided" if outcome.status == "undecided" else "pending"
            else:
                row[outcome.item] = {"not_applicable": "N/A", "unscored": "unscored"}.get(
                    outcome.status, points.get(outcome.item, 0))
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else ["sample_id", "total"])


def _range(totals: Any) -> str:
    return "?" if totals.total_range is None else f"{totals.total_range[0]}–{totals.total_range[1]}"



def run_frame(store: Any, run: str = "latest") -> pd.DataFrame:
    """Every scorecard verdict of a stored run as one frame (a `scorecard` column, then `scorecard_frame`'s):
    `run_frame(RunStore("out/runs.sqlite"), "latest")`. Only each card's own version is shown."""
    import pandas as pd

    scorecards = ScorecardStore(store)
    frames = []
    for card in scorecards.cards(run):
        mine = [v for v in scorecards.verdicts(run, card.id) if v.version == card.version_tag]
        frame = scorecard_frame(card, mine)
        frame.insert(0, "scorecard", card.id)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["scorecard", "sample_id", "total"])
