"""The body of a scorecard review tab, the same in the audit and the team app: the verdicts table, the conversation
view with its deductions marked, and the decision form (item, confirm/reject/missed, note, save). Each app builds its
own header row (the audit app follows its header's run; the team app has a run picker) and wires the buttons."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from rubriceval.ui.common.scorecard_view import decision_choices
from rubriceval.ui.common.wording import Words


@dataclass
class ReviewForm:
    table: gr.Dataframe
    verdict_dd: gr.Dropdown
    view: gr.HTML
    item_dd: gr.Dropdown
    decision: gr.Radio
    note: gr.Textbox
    save_btn: gr.Button
    status: gr.Markdown


def build_review_form(words: Words) -> ReviewForm:
    """Create the table and the form inside the current tab."""
    table = words(gr.Dataframe(interactive=False, max_height=260, elem_id="scr-table",
                               label=words.text("scr_table")), label="scr_table")
    with gr.Row():
        with gr.Column(scale=3):
            # Custom values allowed: a value is checked on the server against the run's verdicts.
            verdict_dd = words(gr.Dropdown(label=words.text("scr_verdict"), choices=[], allow_custom_value=True,
                                           elem_id="scr-verdict"), label="scr_verdict")
            view = gr.HTML(elem_id="scr-view")
        with gr.Column(scale=2):
            item_dd = words(gr.Dropdown(label=words.text("scr_item"), choices=[], allow_custom_value=True,
                                        elem_id="scr-item"), label="scr_item")
            decision = words(gr.Radio(choices=decision_choices(words.lang), label=words.text("scr_decision"),
                                      elem_id="scr-decision"), label="scr_decision", choices=decision_choices)
            note = words(gr.Textbox(label=words.text("scr_note"), lines=2, elem_id="scr-note"), label="scr_note")
            save_btn = words(gr.Button(words.text("scr_save"), variant="primary", elem_id="scr-save"),
                             value="scr_save")
            status = gr.Markdown(elem_id="scr-status")
    return ReviewForm(table, verdict_dd, view, item_dd, decision, note, save_btn, status)
