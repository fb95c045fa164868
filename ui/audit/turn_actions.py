"""The turn-level side of auditing a conversation: show the open item as a transcript, list its agent turns, and save
an expert's verdict on one turn (agree / override the judge's turn score with a reason).

Gradio-free like ui/audit/actions.py: each action takes the store and the session and returns plain values. A turn
verdict moves the audit item's version, so the session's versions are updated after a save, and a stale session
gets a conflict instead of overwriting another expert's change.
"""
from __future__ import annotations

import html

from pydantic import BaseModel, Field

from rubriceval import AuditStore
from rubriceval.i18n import Lang, t
from rubriceval.store.audit_models import AuditError, AuditItem, clean_expert_name
from rubriceval.store.turn_audit import turn_scores
from rubriceval.ui.audit.actions import ActionOutcome, parse_score
from rubriceval.ui.audit.queue import AuditSession, refresh_current
from rubriceval.ui.common.transcript_view import item_conversation_panel, item_lang


class TurnPane(BaseModel):
    """What the turn-verdict controls show for the open item; `visible` is False for single-turn samples."""

    visible: bool = False
    panel_html: str = ""                                   # the transcript (replaces the question/answer pane)
    choices: list[tuple[str, int]] = Field(default_factory=list)   # (label, agent turn number)


def turn_choices(item: AuditItem, lang: Lang) -> list[tuple[str, int]]:
    """Every agent turn, labelled with the judge's score for it when the rubric scores turns one by one."""
    conversation = item.sample.conversation
    if conversation is None:
        return []
    scored = {turn: e.score for (_, turn), e in turn_scores(item.verdict).items()}
    return [(t("cv_turn_pick_label", lang, turn=n,
               judge=t("cv_judge_turn_score", lang, score=f"{scored[n]:g}") if n in scored
               else t("cv_turn_not_judged", lang)), n) for n in conversation.assistant_turns]


def turn_pane(store: AuditStore, session: AuditSession, lang: Lang | None = None) -> TurnPane:
    """The transcript and turn choices of the session's open item (hidden for a single-turn sample)."""
    row = session.current
    if row is None:
        return TurnPane()
    item = store.item(session.run_id, row.sample_id, row.scorer)
    if item.sample.conversation is None:
        return TurnPane()
    return TurnPane(visible=True, panel_html=item_conversation_panel(store, item, session.lang),
                    choices=turn_choices(item, lang or session.lang or item_lang(item)))


def parse_turn(value: object) -> int:
    if value in (None, ""):
        raise AuditError("choose an agent turn first", field="turn")
    try:
        return int(str(value))
    except ValueError:
        raise AuditError(f"turn must be a turn number, got {value!r}", field="turn") from None


def save_turn(store: AuditStore, session: AuditSession, expert: str, turn: object, score: object, reason: str,
              lang: Lang = "en") -> ActionOutcome:
    """Save the expert's verdict on one agent turn of the open conversation item."""
    row = session.current
    if row is None:
        raise AuditError("no item is open", hint="apply the filters to open a queue, then pick an item")
    expert = clean_expert_name(expert)
    number = parse_turn(turn)
    result = store.save_turn_verdict(session.run_id, row.sample_id, row.scorer, turn=number, expert=expert,
                                     score=parse_score(score), reason=reason, expected=session.versions)
    if not result.ok:
        assert result.conflict is not None
        return ActionOutcome(saved=False, conflict=True,
                             message=f'<span class="conflict">{html.escape(t("cv_turn_conflict", lang))}</span> '
                                     + html.escape(result.conflict.message))
    session.versions = result.versions
    refresh_current(store, session, expert)
    action = t(f"cv_action_{result.changes[0]}", lang)
    return ActionOutcome(saved=True, message="✓ " + t("cv_turn_saved", lang, turn=number, action=action))
