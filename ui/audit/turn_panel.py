"""The turn-verdict controls of the audit app: pick an agent turn of the open conversation, score it, say why.

Shown only when the open item is a conversation. The controls follow the item through the sample view: every
event that opens an item re-renders the transcript (which names its item), and that change refreshes the turn
choices here, so none of the item events needs to know about turns. Saving re-renders the transcript with the new
turn verdict and keeps the session's item versions current (a turn verdict moves the item's version).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from rubriceval import AuditStore
from rubriceval.i18n import Lang, t
from rubriceval.ui.audit.queue import AuditSession
from rubriceval.ui.audit.turn_actions import save_turn, turn_pane


@dataclass
class TurnPanel:
    item_key: gr.State            # the item the controls were last filled for ("sample|scorer")
    group: gr.Group
    turn_dd: gr.Dropdown
    score_radio: gr.Radio
    reason_box: gr.Textbox
    save_btn: gr.Button
    status: gr.Markdown
    lang: Lang


def build_turn_panel(lang: Lang = "en") -> TurnPanel:
    """The controls, hidden until a conversation item opens (create inside the item's column)."""
    item_key = gr.State("")
    with gr.Group(visible=False, elem_id="turn-verdicts") as group:
        gr.Markdown(f"**{t('cv_turn_verdicts', lang)}**", elem_id="turn-verdicts-title")
        with gr.Row(equal_height=True):
            turn_dd = gr.Dropdown(label=t("cv_turn_pick", lang), choices=[], scale=2, elem_id="turn-pick")
            score_radio = gr.Radio(choices=["1", "2", "3", "4", "5"], label=t("cv_turn_score", lang), scale=2,
                                   elem_id="turn-score")
        reason_box = gr.Textbox(label=t("cv_turn_reason", lang), lines=1, elem_id="turn-reason")
        save_btn = gr.Button(t("cv_save_turn", lang), size="md", elem_id="turn-save-btn")
        status = gr.Markdown(elem_id="turn-status")
    return TurnPanel(item_key, group, turn_dd, score_radio, reason_box, save_btn, status, lang)


class TurnHandlers:
    def __init__(self, store: AuditStore, panel: TurnPanel):
        self.store = store
        self.panel = panel

    def refresh(self, state: AuditSession, picked: Any, last_key: str) -> list[Any]:
        """The transcript changed: for another item, show or hide the controls and start them empty; for the same
        item (re-rendered after a save), only relabel the turns and keep the pick, the score and the message."""
        row = state.current
        key = f"{row.sample_id}|{row.scorer}" if row is not None else ""
        pane = turn_pane(self.store, state, state.lang or self.panel.lang)
        numbers = [n for _, n in pane.choices]
        if key == last_key:
            return [key, gr.update(), gr.update(choices=pane.choices, value=picked if picked in numbers else None),
                    gr.update(), gr.update(), gr.update()]
        return [key, gr.update(visible=pane.visible), gr.update(choices=pane.choices, value=None),
                gr.update(value=None), "", ""]

    def save(self, who: str, state: AuditSession, turn: Any, score: Any, reason: str) -> list[Any]:
        outcome = save_turn(self.store, state, who, turn, score, reason or "", state.lang or self.panel.lang)
        if not outcome.saved:        # a conflict: leave what the expert typed in place
            return [state, gr.update(), outcome.message, gr.update()]
        return [state, turn_pane(self.store, state).panel_html, outcome.message, ""]


def wire_turns(panel: TurnPanel, handlers: TurnHandlers, session: gr.State, expert: gr.Textbox,
               sample_view: gr.HTML, user_errors: Any, who: Any) -> None:
    """Connect the controls (inside the app's Blocks). `user_errors` and `who` are the app's own rules for
    showing a user mistake and for naming the expert, so the turn controls behave like the rest of the app."""
    sample_view.change(handlers.refresh, inputs=[session, panel.turn_dd, panel.item_key],
                       outputs=[panel.item_key, panel.group, panel.turn_dd, panel.score_radio, panel.reason_box,
                                panel.status],
                       api_visibility="private")

    @user_errors
    def save(name: str, state: AuditSession, turn: Any, score: Any, reason: str, request: gr.Request) -> list[Any]:
        return handlers.save(who(name, request), state, turn, score, reason)

    inputs = [expert, session, panel.turn_dd, panel.score_radio, panel.reason_box]
    outputs = [session, sample_view, panel.status, panel.reason_box]
    panel.save_btn.click(save, inputs=inputs, outputs=outputs, api_name="save_turn_verdict")
    panel.reason_box.submit(save, inputs=inputs, outputs=outputs, api_visibility="private")
