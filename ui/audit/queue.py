"""The audit queue: filters → ordered list of (sample, rubric) verdicts, shown one page at a time.

The whole ordered key list lives in the session (cheap even at 10k rows) so "next item" follows the filtered order;
only the visible page reads the samples' text.
"""
from __future__ import annotations

import pandas as pd
from pydantic import BaseModel, Field

from rubriceval import AuditStore
from rubriceval.i18n import Lang, t
from rubriceval.store.audit_models import ItemVersions, Progress, QueueFilter, QueueRow

PAGE_SIZE = 25
ANY = "(any)"

STATUSES = ("all", "unaudited", "unaudited_by_me", "unscored", "disagreement", "pending_review")
ORDERS = ("judge_asc", "judge_desc", "dataset", "gap_desc", "uncertain_first")
COLUMNS = ("number", "sample", "rubric", "judge", "experts", "you", "gap", "intent", "question")


def status_choices(lang: Lang) -> list[tuple[str, str]]:
    return [(t(f"ui_status_{s}", lang), s) for s in STATUSES]


def order_choices(lang: Lang) -> list[tuple[str, str]]:
    return [(t(f"ui_order_{o}", lang), o) for o in ORDERS]


def queue_columns(lang: Lang) -> list[str]:
    return [t(f"ui_col_{c}", lang) for c in COLUMNS]


class AuditSession(BaseModel):
    """One browser tab's position in the queue and what it saw of the open item."""

    run_id: str = ""
    flt: QueueFilter = Field(default_factory=QueueFilter)
    rows: list[QueueRow] = Field(default_factory=list)
    index: int = -1                        # open item, as a position in rows; -1 = none
    page: int = 0
    versions: ItemVersions = Field(default_factory=ItemVersions)   # what the expert saw when the item opened
    judge_score: float | None = None
    # The app's language (the data's, or the expert's choice); None: each item in its own data's language.
    lang: Lang | None = None

    @property
    def ui_lang(self) -> Lang:
        return self.lang or "en"

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


def open_queue(store: AuditStore, run: str, flt: QueueFilter, lang: Lang | None = None) -> AuditSession:
    run_id = store.resolve(run)
    rows = store.queue(run_id, flt)
    return AuditSession(run_id=run_id, flt=flt, rows=rows, index=0 if rows else -1, page=0, lang=lang)


def page_frame(store: AuditStore, session: AuditSession) -> pd.DataFrame:
    start = session.page * PAGE_SIZE
    rows = store.with_text(session.run_id, session.rows[start:start + PAGE_SIZE]) if session.rows else []
    lang = session.ui_lang
    # "▶" marks the open item, so the expert sees where they are in the queue.
    records = [[f"▶ {start + i + 1}" if start + i == session.index else str(start + i + 1), r.sample_id, r.scorer,
                t("ui_unscored", lang) if r.judge_score is None
                else f"{r.judge_score:g}" + (t("ui_spread", lang, spread=f"{r.spread:g}") if r.spread else ""),
                r.human_scores or "—", "" if r.my_score is None else str(r.my_score),
                "" if r.gap is None else f"{r.gap:g}", r.intent, r.question] for i, r in enumerate(rows)]
    return pd.DataFrame(records, columns=queue_columns(lang))


def page_label(session: AuditSession) -> str:
    return t("ui_page", session.ui_lang, page=session.page + 1, pages=session.n_pages, n=f"{len(session.rows):,}")


def progress_markdown(progress: Progress, session: AuditSession, expert: str) -> str:
    lang = session.ui_lang
    share = f" ({progress.audited / progress.total:.0%})" if progress.total else ""
    me = t("ui_progress_me", lang, n=f"{progress.audited_by_me:,}") if expert.strip() else ""
    position = (t("ui_progress_position", lang, i=f"{session.index + 1:,}", n=f"{len(session.rows):,}")
                if session.current else t("ui_progress_empty", lang))
    return t("ui_progress", lang, audited=f"{progress.audited:,}", total=f"{progress.total:,}", share=share) + me + \
        position


def refresh_current(store: AuditStore, session: AuditSession, expert: str) -> None:
    """Re-read the open item's row after a save (its audit counts changed) without re-running the whole queue."""
    row = session.current
    if row is None:
        return
    fresh = store.queue(session.run_id, QueueFilter(expert=expert), only=(row.sample_id, row.scorer))
    if fresh:
        session.rows[session.index] = fresh[0]
