"""The team app's scorecard review tab (质检复核): a reviewer picks a conversation's scorecard verdict, reads its
deductions with their evidence beside the transcript, and confirms or rejects each deduction or adds a missed item.
Built inside the team layout's gr.Tabs, worded through the same `Words`; hidden until the page load says who may
see it (reviewers and leads)."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from rubriceval.ui.common.scorecard_review_form import ReviewForm, build_review_form
from rubriceval.ui.common.wording import Words


@dataclass
class CardTaskBox:
    """A reviewer's share of scorecard review tasks (blind): pick a conversation, decide every item, save."""
    task_dd: gr.Dropdown
    task_load_btn: gr.Button
    item_dd: gr.Dropdown
    view: gr.HTML
    hits: gr.CheckboxGroup
    nas: gr.CheckboxGroup
    all_decided: gr.Checkbox
    note: gr.Textbox
    save_btn: gr.Button
    status: gr.Markdown
    version: gr.State


@dataclass
class ScorecardReviewTab(ReviewForm):
    """The shared table and form, with the team app's header: the tab, its run picker and load button; above them
    the reviewer's card review tasks."""
    tab: gr.Tab
    run_dd: gr.Dropdown
    load_btn: gr.Button
    tasks: CardTaskBox


def _card_task_box(words: Words) -> CardTaskBox:
    with words(gr.Accordion(words.text("scr_task_box"), open=True, elem_id="scr-task-box"), label="scr_task_box"):
        with gr.Row(equal_height=True):
            task_dd = words(gr.Dropdown(label=words.text("scr_task"), choices=[], allow_custom_value=True, scale=2,
                                        elem_id="scr-task"), label="scr_task")
            task_load_btn = words(gr.Button(words.text("scr_task_load"), scale=0, min_width=120,
                                            elem_id="scr-task-load"), value="scr_task_load")
            item_dd = words(gr.Dropdown(label=words.text("scr_task_item"), choices=[], allow_custom_value=True,
                                        scale=2, elem_id="scr-task-item"), label="scr_task_item")
        with gr.Row():
            with gr.Column(scale=3):
                view = gr.HTML(elem_id="scr-task-view")
            with gr.Column(scale=2):
                hits = words(gr.CheckboxGroup(choices=[], label=words.text("scr_task_hits"), elem_id="scr-task-hits"),
                             label="scr_task_hits")
                nas = words(gr.CheckboxGroup(choices=[], label=words.text("scr_task_nas"), elem_id="scr-task-nas"),
                            label="scr_task_nas")
                all_decided = words(gr.Checkbox(label=words.text("scr_task_all"), elem_id="scr-task-all"),
                                    label="scr_task_all")
                note = words(gr.Textbox(label=words.text("scr_note"), lines=2, elem_id="scr-task-note"),
                             label="scr_note")
                save_btn = words(gr.Button(words.text("scr_task_save"), variant="primary", elem_id="scr-task-save"),
                                 value="scr_task_save")
                status = gr.Markdown(elem_id="scr-task-status")
    return CardTaskBox(task_dd, task_load_btn, item_dd, view, hits, nas, all_decided, note, save_btn, status,
                       gr.State(0))


def build_scorecard_review_tab(words: Words) -> ScorecardReviewTab:
    # Choices are filled per user after login (allow_custom_value: a typed value is checked on the server).
    with words(gr.Tab(words.text("scr_tab"), id="scorecard-review", visible=False), label="scr_tab") as tab:
        tasks = _card_task_box(words)
        with gr.Row(equal_height=True):
            run_dd = words(gr.Dropdown(label=words.text("scr_run"), choices=[], allow_custom_value=True, scale=2,
                                       elem_id="scr-run"), label="scr_run")
            load_btn = words(gr.Button(words.text("scr_load"), variant="primary", scale=0, min_width=120,
                                       elem_id="scr-load"), value="scr_load")
        form = build_review_form(words)
    return ScorecardReviewTab(**vars(form), tab=tab, run_dd=run_dd, load_btn=load_btn, tasks=tasks)
