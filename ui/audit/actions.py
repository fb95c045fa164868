"""What an expert does to an item: open it, agree or override the judge's score, correct the ground truth.

Gradio-free on purpose: each action takes the store and the session and returns plain values, so the app only wires
them to components and the logic is testable without a browser.
"""
from __future__ import annotations

import html
from typing import Literal

from pydantic import BaseModel, Field

from rubriceval import AuditStore
from rubriceval.i18n import Lang, t
from rubriceval.store.audit_models import AuditError, AuditItem, ItemVersions, SaveResult, clean_expert_name
from rubriceval.ui.audit.queue import PAGE_SIZE, AuditSession, refresh_current
from rubriceval.ui.common.item_view import history_html, judge_html, sample_html
from rubriceval.ui.common.transcript_view import item_conversation_panel


class ItemView(BaseModel):
    """Everything the item pane shows; empty when the queue is empty."""

    sample_html: str = ""
    judge_html: str = ""
    history_html: str = ""
    ground_truth: str = ""
    context_choices: list[str] = Field(default_factory=list)
    relevant_contexts: list[str] = Field(default_factory=list)
    my_score: str | None = None          # the expert's saved score, preselected ("1".."5")
    my_reason: str = ""
    title: str = ""


def context_label(index: int, text: str) -> str:
    preview = " ".join(text.split())
    return f"#{index + 1} {preview[:60]}{'…' if len(preview) > 60 else ''}"


def relevant_by_default(item: AuditItem) -> list[int]:
    """Contexts shown as relevant: the expert's mark when there is one, else 'is it a reference context'."""
    out = []
    for index, text in enumerate(item.original.contexts):
        mark = item.context_marks.get(index)
        if (mark.relevant if mark is not None else text in item.sample.reference_contexts):
            out.append(index)
    return out


def open_item(store: AuditStore, session: AuditSession, index: int, expert: str = "") -> ItemView:
    """Load the item at `index` of the queue and remember the versions the expert now sees."""
    lang = session.ui_lang
    if not session.rows:
        session.index = -1
        return ItemView(sample_html=f"<i>{html.escape(t('ui_no_item', lang))}</i>")
    session.index = max(0, min(index, len(session.rows) - 1))
    row = session.rows[session.index]
    item = store.item(session.run_id, row.sample_id, row.scorer)
    session.versions = item.versions
    session.judge_score = item.verdict.score
    session.page = session.index // PAGE_SIZE
    mine = next((r for r in item.responses if r.expert == expert.strip()), None) if expert.strip() else None
    labels = [context_label(i, text) for i, text in enumerate(item.original.contexts)]
    # A conversation shows as a chat transcript with the cited turns and the experts' turn verdicts.
    left = (sample_html(item, lang) if item.sample.conversation is None
            else item_conversation_panel(store, item, session.lang))
    return ItemView(
        sample_html=left, judge_html=judge_html(item, lang), history_html=history_html(item.gt_history, lang),
        ground_truth=item.sample.ground_truth, context_choices=labels,
        relevant_contexts=[labels[i] for i in relevant_by_default(item)],
        my_score=str(mine.score) if mine else None, my_reason=mine.reason if mine else "",
        title=t("ui_item_title", lang, i=f"{session.index + 1:,}", n=f"{len(session.rows):,}", sample=row.sample_id,
                scorer=row.scorer))


def parse_score(value: object, lang: Lang = "en") -> int:
    """The radio's value ("1".."5") as an int; anything else is the expert's mistake, said plainly."""
    if value in (None, ""):
        raise AuditError(t("ui_need_score", lang), field="score")
    try:
        number = float(str(value))
    except ValueError:
        raise AuditError(f"score must be 1–5, got {value!r}", field="score") from None
    if number != int(number) or not 1 <= number <= 5:
        raise AuditError(f"score must be a whole number from 1 to 5, got {value!r}", field="score")
    return int(number)


class ActionOutcome(BaseModel):
    saved: bool
    message: str                         # Markdown for the status line
    conflict: bool = False


def _expert_name(expert: str, session: AuditSession) -> str:
    if not (expert or "").strip():
        raise AuditError(t("ui_need_name", session.ui_lang), field="expert")
    return clean_expert_name(expert)


def _require_item(session: AuditSession) -> None:
    if session.current is None:
        raise AuditError("no item is open", hint="apply the filters to open a queue, then pick an item")


def save_verdict(store: AuditStore, session: AuditSession, expert: str, score: object, reason: str) -> ActionOutcome:
    """Agree (score = judge's) or override (reason required); a conflict leaves the session on the item."""
    _require_item(session)
    expert = _expert_name(expert, session)
    row = session.current
    chosen = parse_score(score, session.ui_lang)
    if session.judge_score is not None and chosen != session.judge_score and not reason.strip():
        # Said here in the app's language; the store refuses it too.
        raise AuditError(t("ui_need_reason", session.ui_lang, score=chosen, judge=f"{session.judge_score:g}"),
                         field="reason")
    result = store.save_response(session.run_id, row.sample_id, row.scorer, expert=expert, score=chosen,
                                 reason=reason, expected=session.versions)
    saved_as = {"agree": "ui_saved_agree", "override": "ui_saved_override", "score_unscored": "ui_saved_score"}.get(
        result.changes[0] if result.changes else "", "ui_saved_score")
    return _outcome(store, session, result, expert,
                    t(saved_as, session.ui_lang, sample=row.sample_id, scorer=row.scorer), "item")


def agree(store: AuditStore, session: AuditSession, expert: str) -> ActionOutcome:
    _require_item(session)
    if session.judge_score is None:
        raise AuditError("the judge gave no score here, so there is nothing to agree with: choose a score (1–5)",
                         field="score")
    return save_verdict(store, session, expert, int(session.judge_score), "")


def edit_ground_truth(store: AuditStore, session: AuditSession, expert: str, ground_truth: str,
                      relevant_labels: list[str] | None) -> ActionOutcome:
    """Save a corrected reference answer and the relevance marks that differ from what is shown as stored."""
    _require_item(session)
    expert = _expert_name(expert, session)
    row = session.current
    item = store.item(session.run_id, row.sample_id, row.scorer)
    # Only the boxes the expert flipped become marks; if the stored state moved on since the item was opened, the
    # store refuses the save as a conflict (expected_sample_version), so `shown` is what they saw.
    shown = set(relevant_by_default(item))
    labels = [context_label(i, text) for i, text in enumerate(item.original.contexts)]
    chosen = {labels.index(label) for label in (relevant_labels or []) if label in labels}
    relevance = {i: i in chosen for i in range(len(item.original.contexts)) if (i in chosen) != (i in shown)}
    result = store.edit_ground_truth(session.run_id, row.sample_id, editor=expert,
                                     expected_sample_version=session.versions.sample,
                                     ground_truth=ground_truth, context_relevance=relevance)
    lang = session.ui_lang
    changes = [t("ui_saved_ground_truth", lang) if c == "ground_truth" else
               t("ui_context_n", lang, n=int(c.split(":", 1)[1]) + 1) if c.startswith("context:") else c
               for c in result.changes]
    return _outcome(store, session, result, expert,
                    t("ui_saved_edits", lang, changes=", ".join(changes), sample=row.sample_id), "sample")


def _outcome(store: AuditStore, session: AuditSession, result: SaveResult, expert: str, saved_message: str,
             level: Literal["item", "sample"]) -> ActionOutcome:
    if not result.ok:
        assert result.conflict is not None
        lang = session.ui_lang
        return ActionOutcome(saved=False, conflict=True,
                             message=f'<span class="conflict">{html.escape(t("ui_conflict", lang))}</span> '
                                     f"{html.escape(result.conflict.message)} "
                                     f"{html.escape(t('ui_conflict_kept', lang))}")
    # A ground-truth edit only moves the sample's version; a response returns both.
    session.versions = (result.versions if level == "item"
                        else ItemVersions(item=session.versions.item, sample=result.versions.sample))
    refresh_current(store, session, expert)
    return ActionOutcome(saved=True, message=f"✓ {saved_message}")
