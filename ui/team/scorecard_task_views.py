"""What a reviewer sees of one conversation of a scorecard review task (rubriceval/audit/team_cards.py): the
transcript and every item of the card by name; the machine's statuses, its total and the official total only once
the reviewer saved their own (blind). Every piece of user text escaped (transcripts are hostile input)."""
from __future__ import annotations

from typing import Any

from rubriceval.audit.team_cards import CardTaskItem
from rubriceval.i18n import Lang, t
from rubriceval.ui.common.item_view import esc
from rubriceval.ui.common.transcript_view import transcript_html


def status_text(status: str | None, lang: Lang) -> str:
    return "—" if not status else t(f"scr_status_{status}", lang)


def card_task_html(item: CardTaskItem, sample: Any, official: int | None, lang: Lang) -> str:
    """official: the conversation's official total now (audit/scorecard_official.py), shown with the machine's."""
    shown = item.machine is not None
    rows = []
    for item_id, name in item.items:
        called = f"<b>{esc(name)}</b> <code>{esc(item_id)}</code>" if name != item_id else f"<b>{esc(item_id)}</b>"
        mine = f" · {esc(t('scr_task_mine', lang))}: {esc(status_text(item.mine.get(item_id), lang))}"
        machine = (f" · {esc(t('scr_task_machine', lang))}: {esc(status_text(item.machine.get(item_id), lang))}"
                   if item.machine is not None else "")
        rows.append(f"<li data-item='{esc(item_id)}'>{called}{mine if item.mine else ''}{machine}</li>")
    if shown:
        head = (f"<p>{esc(t('scr_total', lang))} {esc(t('scr_task_machine', lang))} "
                f"<b class='scr-total'>{'—' if item.machine_total is None else item.machine_total}</b> · "
                f"{esc(t('scr_task_mine', lang))} {'—' if item.my_total is None else item.my_total} · "
                f"{esc(t('appeal_ui_official', lang))} <b class='official-score'>{'—' if official is None else official}"
                f"</b></p>")
    else:
        head = f"<p class='scr-blind'>{esc(t('scr_task_blind', lang))}</p>"
    said = transcript_html(sample.conversation, None, lang, summary=False) if sample.conversation is not None \
        else f"<p class='q'>{esc(sample.question)}</p><p class='a'>{esc(sample.answer)}</p>"
    return (f"<div class='scr-task'><p><b>{esc(item.sample_id)}</b> · {esc(item.card_name)} "
            f"(#{item.item_no})</p>{head}<ul class='scr-task-items'>{''.join(rows)}</ul>{said}</div>")


def item_labels(item: CardTaskItem) -> list[tuple[str, str]]:
    """The card's items as the check boxes name them: the card's name, the id as a hint."""
    return [(f"{name} ({item_id})" if name != item_id else item_id, item_id) for item_id, name in item.items]
