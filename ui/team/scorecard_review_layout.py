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
class ScorecardReviewTab(ReviewForm):
    """The shared table and form, with the team app's header: the tab, its run picker and load button."""
    tab: gr.Tab
    run_dd: gr.Dropdown
    load_btn: gr.Button


def build_scorecard_review_tab(words: Words) -> ScorecardReviewTab:
    # Choices are filled per user after login (allow_custom_value: a typed value is checked on the server).
    with words(gr.Tab(words.text("scr_tab"), id="scorecard-review", visible=False), label="scr_tab") as tab:
        with gr.Row(equal_height=True):
            run_dd = words(gr.Dropdown(label=words.text("scr_run"), choices=[], allow_custom_value=True, scale=2,
                                       elem_id="scr-run"), label="scr_run")
            load_btn = words(gr.Button(words.text("scr_load"), variant="primary", scale=0, min_width=120,
                                       elem_id="scr-load"), value="scr_load")
        form = build_review_form(words)
    return ScorecardReviewTab(**vars(form), tab=tab, run_dd=run_dd, load_btn=load_btn)
