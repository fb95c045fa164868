"""The audit queue: filters → ordered list of (sample, rubric) verdicts, shown one page at a time.

The whole ordered key list lives in the session (cheap even at 10k rows) so "next item" follows the filtered order;
only the visible page reads the samples' text.
"""
from __future__ import annotations

import pandas as pd
from pydantic import BaseModel, Field

from rubriceval import AuditStore
from rubriceval.store.audit_models import ItemVersions, Progress, QueueFilter, QueueRow

PAGE_SIZE = 25
ANY = "(any)"

STATUS_CHOICES: list[tuple[str, str]] = [
    ("All verdicts", "all"),
    ("Not audited yet", "unaudited"),
    ("Not audited by me", "unaudited_by_me"),
    ("Unscored by judge", "unscored"),
    ("Judge ≠ expert", "disagreement"),
]
ORDER_CHOICES: list[tuple[str, str]] = [
    ("Judge score ↑", "judge_asc"),
    ("Judge score ↓", "judge_desc"),
    ("Dataset order", "dataset"),
    ("Largest gap first", "gap_desc"),
    ("Judges disagree first (panel, self-consistency)", "uncertain_first"),
]
QUEUE_COLUMNS = ["#", "sample", "rubric", "judge", "experts", "you", "gap", "intent", "question"]


class AuditSession(BaseModel):
    """One browser tab's position in the queue and what it saw of the open item."""

    run_id: str = ""
    flt: QueueFilter = Field(default_factory=QueueFilter)
    rows: list[QueueRow] = Field(default_factory=list)
    index: int = -1                        # open item, as a position in rows; -1 = none
    page: int = 0
    versions: ItemVersions = Field(default_factory=ItemVersions)   # what the expert saw when the item opened
    judge_score: float | None = None

    @property
    def current(self) -> QueueRow | None:
        return self.rows[self.index] if 0 <= self.index < len(self.rows) else None

    @property
    def n_pages(self) -> int:
        return max(1, -(-len(self.rows) // PAGE_SIZE))


def make_filter(expert: str, scorer: str | None, tag: str | None, intent: str | None, score_min: float | None,
                score_max: float | None, status: str | None, order: str | None) -> QueueFilter:
    def chosen(value: str | None) -> str | None:
        return None if value in (None, "", ANY) else value

    low, high = score_min, score_max
    if low is not None and high is not None and low > high:
        low, high = high, low
    return QueueFilter(scorer=chosen(scorer), tag=chosen(tag), intent=chosen(intent),
                       score_min=None if low in (None, 1) else low, score_max=None if high in (None, 5) else high,
                       status=status or "all", order=order or "judge_asc", expert=expert.strip())


def open_queue(store: AuditStore, run: str, flt: QueueFilter) -> AuditSession:
    run_id = store.resolve(run)
    rows = store.queue(run_id, flt)
    return AuditSession(run_id=run_id, flt=flt, rows=rows, index=0 if rows else -1, page=0)


def page_frame(store: AuditStore, session: AuditSession) -> pd.DataFrame:
    start = session.page * PAGE_SIZE
    rows = store.with_text(session.run_id, session.rows[start:start + PAGE_SIZE]) if session.rows else []
    # "▶" marks the open item, so the expert sees where they are in the queue.
    records = [[f"▶ {start + i + 1}" if start + i == session.index else str(start + i + 1), r.sample_id, r.scorer,
                "unscored" if r.judge_score is None
                else f"{r.judge_score:g}" + (f" (spread {r.spread:g})" if r.spread else ""),
                r.human_scores or "—", "" if r.my_score is None else str(r.my_score),
                "" if r.gap is None else f"{r.gap:g}", r.intent, r.question] for i, r in enumerate(rows)]
    return pd.DataFrame(records, columns=QUEUE_COLUMNS)


def page_label(session: AuditSession) -> str:
    return f"Page {session.page + 1} / {session.n_pages} · {len(session.rows):,} items match"


def progress_markdown(progress: Progress, session: AuditSession, expert: str) -> str:
    share = f" ({progress.audited / progress.total:.0%})" if progress.total else ""
    me = f" · you: {progress.audited_by_me:,}" if expert.strip() else ""
    position = (f" · item {session.index + 1:,} of {len(session.rows):,} in this queue"
                if session.current else " · queue empty")
    return f"**Audited {progress.audited:,} / {progress.total:,}**{share}{me}{position}"


def refresh_current(store: AuditStore, session: AuditSession, expert: str) -> None:
    """Re-read the open item's row after a save (its audit counts changed) without re-running the whole queue."""
    row = session.current
    if row is None:
        return
    fresh = store.queue(session.run_id, QueueFilter(expert=expert), only=(row.sample_id, row.scorer))
    if fresh:
        session.rows[session.index] = fresh[0]
