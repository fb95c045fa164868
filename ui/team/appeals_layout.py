"""The team app's tabs for official scores: an agent's own verdicts and appeals (申诉), the reviewers' appeals inbox
(复核, a lead's final judgement) and calibration sessions (校准会). Built inside the team layout's gr.Tabs, worded
through the same `Words` so a language switch relabels them; hidden until the page load says who may see them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from rubriceval.i18n import Lang, t
from rubriceval.ui.common.wording import Words
from rubriceval.ui.team.appeals_views import state_choices

SCORES = ["1", "2", "3", "4", "5"]


def outcome_choices(lang: Lang) -> list[tuple[str, str]]:
    return [(t("appeal_ui_accept", lang), "accepted"), (t("appeal_ui_reject", lang), "rejected")]


@dataclass
class AgentTab:
    tab: gr.Tab
    run_dd: gr.Dropdown
    load_btn: gr.Button
    closes: gr.Markdown
    table: gr.Dataframe
    verdict_dd: gr.Dropdown
    verdict_view: gr.HTML
    deduction_dd: gr.Dropdown
    reason: gr.Textbox
    submit_btn: gr.Button
    status: gr.Markdown


@dataclass
class InboxTab:
    tab: gr.Tab
    state_dd: gr.Dropdown
    refresh_btn: gr.Button
    table: gr.Dataframe
    appeal_dd: gr.Dropdown
    open_btn: gr.Button
    view: gr.HTML
    version: gr.State
    take_btn: gr.Button
    outcome: gr.Radio
    score: gr.Radio
    reason: gr.Textbox
    decide_btn: gr.Button
    final_btn: gr.Button
    status: gr.Markdown


@dataclass
class CalibrationTab:
    tab: gr.Tab
    lead_box: gr.Accordion
    name: gr.Textbox
    run_dd: gr.Dropdown
    rubric: gr.Textbox
    picks: gr.Textbox
    reviewers: gr.Dropdown
    create_btn: gr.Button
    create_status: gr.Markdown
    session_dd: gr.Dropdown
    open_btn: gr.Button
    items: gr.Dataframe
    item_no: gr.Number
    item_view: gr.HTML
    grade: gr.Radio
    save_btn: gr.Button
    status: gr.Markdown
    report_btn: gr.Button
    report: gr.Markdown


@dataclass
class AppealTabs:
    agent: AgentTab
    inbox: InboxTab
    calibration: CalibrationTab
    tabs: gr.Tabs | None = None       # the team page's tabs: an agent's page opens on their own verdicts


def _dd(words: Words, key: str, elem_id: str, **kwargs: Any) -> gr.Dropdown:
    # Choices are filled per user after login; values only reach SQL as parameters.
    return words(gr.Dropdown(label=words.text(key), elem_id=elem_id, allow_custom_value=True, **kwargs), label=key)


def _btn(words: Words, key: str, elem_id: str, **kwargs: Any) -> gr.Button:
    return words(gr.Button(words.text(key), elem_id=elem_id, **kwargs), value=key)


def _box(words: Words, key: str, elem_id: str, **kwargs: Any) -> gr.Textbox:
    return words(gr.Textbox(label=words.text(key), elem_id=elem_id, **kwargs), label=key)


def _agent_tab(words: Words) -> AgentTab:
    with words(gr.Tab(words.text("appeal_ui_tab_mine"), id="appeal-mine", visible=False),
               label="appeal_ui_tab_mine") as tab:
        with gr.Row(equal_height=True):
            run_dd = _dd(words, "appeal_ui_run", "appeal-run", choices=[], scale=2)
            load_btn = _btn(words, "appeal_ui_load", "appeal-load", variant="primary", scale=0, min_width=120)
        closes = gr.Markdown(elem_id="appeal-closes")
        table = words(gr.Dataframe(interactive=False, max_height=260, elem_id="appeal-my-verdicts",
                                   label=words.text("appeal_ui_my_verdicts")), label="appeal_ui_my_verdicts")
        with gr.Row():
            with gr.Column(scale=1):
                verdict_dd = _dd(words, "appeal_ui_verdict", "appeal-verdict", choices=[])
                verdict_view = gr.HTML(elem_id="appeal-verdict-view")
            with gr.Column(scale=1):
                deduction_dd = _dd(words, "appeal_ui_deduction", "appeal-deduction", choices=[])
                reason = _box(words, "appeal_ui_reason", "appeal-reason", lines=3)
                submit_btn = _btn(words, "appeal_ui_submit", "appeal-submit", variant="primary")
                status = gr.Markdown(elem_id="appeal-status")
    return AgentTab(tab, run_dd, load_btn, closes, table, verdict_dd, verdict_view, deduction_dd, reason, submit_btn,
                    status)


def _inbox_tab(words: Words) -> InboxTab:
    with words(gr.Tab(words.text("appeal_ui_tab_inbox"), id="appeal-inbox", visible=False),
               label="appeal_ui_tab_inbox") as tab:
        with gr.Row(equal_height=True):
            state_dd = words(gr.Dropdown(label=words.text("appeal_ui_state"), value="submitted",
                                         choices=state_choices(words.lang), elem_id="appeal-inbox-state", scale=1),
                             label="appeal_ui_state", choices=state_choices)
            refresh_btn = _btn(words, "appeal_ui_refresh", "appeal-inbox-refresh", variant="primary", scale=0,
                               min_width=120)
        table = words(gr.Dataframe(interactive=False, max_height=240, elem_id="appeal-inbox-table",
                                   label=words.text("appeal_ui_inbox")), label="appeal_ui_inbox")
        with gr.Row(equal_height=True):
            appeal_dd = _dd(words, "appeal_ui_appeal", "appeal-pick", choices=[], scale=2)
            open_btn = _btn(words, "appeal_ui_open", "appeal-open", scale=0, min_width=120)
        version = gr.State(0)
        with gr.Row():
            with gr.Column(scale=1):
                view = gr.HTML(elem_id="appeal-view")
            with gr.Column(scale=1):
                take_btn = _btn(words, "appeal_ui_take", "appeal-take")
                outcome = words(gr.Radio(choices=outcome_choices(words.lang), label=words.text("appeal_ui_outcome"),
                                         elem_id="appeal-outcome"), label="appeal_ui_outcome", choices=outcome_choices)
                score = words(gr.Radio(choices=SCORES, label=words.text("appeal_ui_score"), elem_id="appeal-score"),
                              label="appeal_ui_score")
                reason = _box(words, "appeal_ui_decision_reason", "appeal-decision-reason", lines=2)
                with gr.Row():
                    decide_btn = _btn(words, "appeal_ui_decide", "appeal-decide", variant="primary")
                    final_btn = _btn(words, "appeal_ui_final", "appeal-final", visible=False)
                status = gr.Markdown(elem_id="appeal-inbox-status")
    return InboxTab(tab, state_dd, refresh_btn, table, appeal_dd, open_btn, view, version, take_btn, outcome, score,
                    reason, decide_btn, final_btn, status)


def _calibration_tab(words: Words) -> CalibrationTab:
    with words(gr.Tab(words.text("appeal_ui_tab_calibration"), id="calibration", visible=False),
               label="appeal_ui_tab_calibration") as tab:
        with words(gr.Accordion(words.text("cal_ui_new"), open=False, visible=False, elem_id="cal-new"),
                   label="cal_ui_new") as lead_box:
            with gr.Row():
                name = _box(words, "cal_ui_name", "cal-name", scale=2)
                run_dd = _dd(words, "appeal_ui_run", "cal-run", choices=[], scale=2)
                rubric = _box(words, "cal_ui_rubric", "cal-rubric", scale=1)
            with gr.Row():
                picks = _box(words, "cal_ui_picks", "cal-picks", lines=4, scale=3)
                reviewers = _dd(words, "cal_ui_reviewers", "cal-reviewers", choices=[], multiselect=True, scale=2)
            create_btn = _btn(words, "cal_ui_create", "cal-create", variant="primary")
            create_status = gr.Markdown(elem_id="cal-create-status")
        with gr.Row(equal_height=True):
            session_dd = _dd(words, "cal_ui_session", "cal-session", choices=[], scale=2)
            open_btn = _btn(words, "appeal_ui_open", "cal-open", variant="primary", scale=0, min_width=120)
            report_btn = _btn(words, "cal_ui_report", "cal-report-btn", scale=0, min_width=160, visible=False)
        items = words(gr.Dataframe(interactive=False, max_height=220, elem_id="cal-items",
                                   label=words.text("cal_ui_items")), label="cal_ui_items")
        with gr.Row():
            with gr.Column(scale=1):
                item_no = words(gr.Number(None, label=words.text("cal_ui_item"), precision=0, minimum=1,
                                          elem_id="cal-item-no"), label="cal_ui_item")
                item_view = gr.HTML(elem_id="cal-item-view")
            with gr.Column(scale=1):
                grade = words(gr.Radio(choices=SCORES, label=words.text("cal_ui_grade"), elem_id="cal-grade"),
                              label="cal_ui_grade")
                save_btn = _btn(words, "cal_ui_save", "cal-save", variant="primary")
                status = gr.Markdown(elem_id="cal-status")
        report = gr.Markdown(elem_id="cal-report")
    return CalibrationTab(tab, lead_box, name, run_dd, rubric, picks, reviewers, create_btn, create_status, session_dd,
                          open_btn, items, item_no, item_view, grade, save_btn, status, report_btn, report)


def build_appeal_tabs(words: Words) -> AppealTabs:
    """Inside the team layout's gr.Tabs."""
    agent = _agent_tab(words)
    return AppealTabs(agent, _inbox_tab(words), _calibration_tab(words), agent.tab.parent)
